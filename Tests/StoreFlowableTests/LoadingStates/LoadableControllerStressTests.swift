import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Many loads on one controller at once, from many tasks (run under ThreadSanitizer in CI).
@Suite("LoadableController under contention", .timeLimit(.minutes(2)))
struct LoadableControllerStressTests {
    /// 1,000 loads started at once, from 1,000 tasks, each of them returning its value even when it is
    /// cancelled (work that ignores cancellation): the controller ends with the value of the last one
    /// started, the only one not superseded.
    @Test func concurrentLoadsEndWithTheStateOfTheLastOneStarted() async {
        let clock = ManualClock()
        let controller = LoadableController<Int>()
        let count = 1_000
        let notSuperseded = LockedValue<[Int]>([])
        let returned = AsyncStream.makeStream(of: Int.self)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    await controller.loadAndWait {
                        do {
                            try await clock.sleep(for: .seconds(1))
                            notSuperseded.withLock { $0.append(index) }
                        } catch {}
                        return index
                    }
                    returned.continuation.yield(index)
                }
            }
            // Every superseded load returns once its work saw the cancellation; the last one started
            // waits on the clock.
            var seen = 0
            for await _ in returned.stream {
                seen += 1
                if seen == count - 1 { break }
            }
            await clock.sleepers(atLeast: 1)
            #expect(clock.sleeperCount == 1)
            clock.advance(by: .seconds(1))
        }
        let survivors = notSuperseded.withLock { $0 }
        #expect(survivors.count == 1)
        if let last = survivors.first {
            #expect(controller.state == .loaded(last))
        }
    }

    /// Loads, cancels and resets from many tasks at once: the state always ends as one of the states a
    /// controller can show, and a final load wins.
    @Test func loadsCancelsAndResetsFromManyTasksLeaveAConsistentController() async {
        let controller = LoadableController<Int>()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<600 {
                group.addTask {
                    switch index % 3 {
                    case 0: await controller.load { index }.value
                    case 1: controller.cancel()
                    default: controller.reset()
                    }
                }
            }
        }
        await controller.loadAndWait { -1 }
        #expect(controller.state == .loaded(-1))
    }
}
