import Foundation
import StoreFlowable
import Testing

/// ``onThreadOfItsOwn(_:)``, through which the child-process tests wait: blocking work there leaves the
/// cooperative pool free.
@Suite struct ThreadOfItsOwnTests {
    /// More blocking calls at once than the pool has threads (one per core): another task still runs,
    /// and each call returns its value once released. Made on the pool itself, the calls would take
    /// every thread and the test would hang until its time limit.
    @Test(.timeLimit(.minutes(1)))
    func blockingCallsBeyondThePoolsSizeLeaveItFree() async {
        let calls = ProcessInfo.processInfo.activeProcessorCount + 2
        let release = DispatchSemaphore(value: 0)
        let blocked = LockedValue(0)
        let tasks = (0..<calls).map { index in
            Task {
                await onThreadOfItsOwn {
                    blocked.withLock { $0 += 1 }
                    release.wait()
                    return index
                }
            }
        }
        while blocked.withLock({ $0 }) < calls && !Task.isCancelled { await Task.yield() }
        #expect(await Task.detached { "ran" }.value == "ran")
        for _ in 0..<calls { release.signal() }
        var values: [Int] = []
        for task in tasks { values.append(await task.value) }
        #expect(values == Array(0..<calls))
    }

    /// What the body throws reaches the caller.
    @Test(.timeLimit(.minutes(1)))
    func anErrorThrownOnTheThreadIsThrownToTheCaller() async {
        await #expect(throws: CrashWriterFailure.self) {
            try await onThreadOfItsOwn { () throws(CrashWriterFailure) -> Int in throw CrashWriterFailure("failed") }
        }
    }
}
