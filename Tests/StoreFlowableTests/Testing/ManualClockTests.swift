import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// The test clock: sleepers wake exactly when the clock reaches their deadline, in order, and a
/// cancelled sleeper throws at once.
@Suite("ManualClock", .timeLimit(.minutes(1)))
struct ManualClockTests {
    @Test func sleepersWakeWhenTheClockReachesTheirDeadlineInOrder() async throws {
        let clock = ManualClock()
        let woken = LockedValue<[Int]>([])
        let sleepers = (1...3).map { seconds in
            Task {
                try await clock.sleep(for: .seconds(seconds))
                woken.withLock { $0.append(seconds) }
            }
        }
        await clock.sleepers(atLeast: 3)
        clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 3)
        clock.advance(by: .milliseconds(1))
        try await sleepers[0].value
        #expect(woken.withLock { $0 } == [1])
        clock.advance(by: .seconds(5))
        try await sleepers[1].value
        try await sleepers[2].value
        #expect(woken.withLock { $0 }.sorted() == [1, 2, 3])
        #expect(clock.now == ManualClock.Instant(offset: .seconds(6)))
    }

    @Test func aDeadlineAlreadyPassedReturnsAtOnce() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(10))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(3)))
        #expect(clock.sleeperCount == 0)
    }

    @Test func aCancelledSleeperThrowsAtOnceAndStopsCounting() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.sleepers(atLeast: 1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func aSleeperCancelledBeforeItSleepsThrows() async {
        let clock = ManualClock()
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func manySleepersCancelledWhileTheClockMovesAllEnd() async {
        let clock = ManualClock()
        let ended = LockedValue(0)
        let count = 200
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    let sleeper = Task { try? await clock.sleep(for: .milliseconds(index % 7)) }
                    if index % 2 == 0 { sleeper.cancel() }
                    await sleeper.value
                    ended.withLock { $0 += 1 }
                }
            }
            group.addTask {
                // Moves the clock until every sleeper has ended, however late one started sleeping.
                while ended.withLock({ $0 }) < count {
                    clock.advance(by: .milliseconds(1))
                    await Task.yield()
                }
            }
        }
        #expect(clock.sleeperCount == 0)
    }
}
