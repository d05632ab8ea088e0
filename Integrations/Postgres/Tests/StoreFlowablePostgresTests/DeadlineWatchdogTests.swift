import NIOEmbedded
import PostgresNIO
import Synchronization
import Testing

@testable import StoreFlowablePostgres

/// The watchdog that keeps every statement's deadline (``DeadlineWatchdog``), and
/// ``withDeadline(_:watchdog:pastDeadlineAfterCancellation:_:)`` on it, on an event loop whose clock
/// the tests move.
@Suite(.timeLimit(.minutes(1)))
struct DeadlineWatchdogTests {
    /// A testing loop and a watchdog on its clock.
    private static func makeWatchdog() -> (NIOAsyncTestingEventLoop, DeadlineWatchdog) {
        let loop = NIOAsyncTestingEventLoop()
        return (loop, DeadlineWatchdog(eventLoop: loop, now: { loop.now }))
    }

    @Test func anEntryRunsAtItsDeadlineAndNotBefore() async {
        let (loop, watchdog) = Self.makeWatchdog()
        let runs = Tally()
        _ = watchdog.register(deadline: loop.now + .milliseconds(100)) { runs.add() }
        await loop.advanceTime(by: .milliseconds(99))
        #expect(runs.value == 0)
        await loop.advanceTime(by: .milliseconds(1))
        #expect(runs.value == 1)
        await loop.advanceTime(by: .seconds(10))
        #expect(runs.value == 1)
        #expect(watchdog.pendingCount == 0)
        await loop.shutdownGracefully()
    }

    @Test func aRemovedEntryNeverRuns() async {
        let (loop, watchdog) = Self.makeWatchdog()
        let runs = Tally()
        let entry = watchdog.register(deadline: loop.now + .milliseconds(100)) { runs.add() }
        await loop.advanceTime(by: .milliseconds(50))
        watchdog.remove(entry)
        watchdog.remove(entry)
        await loop.advanceTime(by: .seconds(1))
        #expect(runs.value == 0)
        #expect(watchdog.pendingCount == 0)
        await loop.shutdownGracefully()
    }

    @Test func aDeadlineAlreadyPassedRunsAtOnce() async {
        let (loop, watchdog) = Self.makeWatchdog()
        let runs = Tally()
        _ = watchdog.register(deadline: loop.now) { runs.add() }
        await loop.run()
        #expect(runs.value == 1)
        await loop.shutdownGracefully()
    }

    /// The cost promise: statements that share one timeout and end before it schedule one timer in
    /// all, not one each; the timer that fires for entries long removed schedules no other.
    @Test func operationsWithOneTimeoutShareOneTimer() async {
        let (loop, watchdog) = Self.makeWatchdog()
        for _ in 0..<1_000 {
            let entry = watchdog.register(deadline: loop.now + .seconds(5)) {}
            await loop.advanceTime(by: .milliseconds(1))
            watchdog.remove(entry)
        }
        #expect(watchdog.timersScheduled == 1)
        await loop.advanceTime(by: .seconds(10))
        #expect(watchdog.timersScheduled == 1)

        // One still running when the timer fires: the timer is set again for it, once.
        let runs = Tally()
        _ = watchdog.register(deadline: loop.now + .seconds(5)) { runs.add() }
        let ended = watchdog.register(deadline: loop.now + .seconds(5)) {}
        watchdog.remove(ended)
        await loop.advanceTime(by: .seconds(1))
        _ = watchdog.register(deadline: loop.now + .seconds(5)) { runs.add() }
        await loop.advanceTime(by: .seconds(4))
        #expect(runs.value == 1)
        #expect(watchdog.timersScheduled == 3)
        await loop.advanceTime(by: .seconds(1))
        #expect(runs.value == 2)
        #expect(watchdog.pendingCount == 0)
        await loop.shutdownGracefully()
    }

    @Test func anEarlierDeadlineRegisteredLaterRunsAtItsTime() async {
        let (loop, watchdog) = Self.makeWatchdog()
        let late = Tally()
        let early = Tally()
        _ = watchdog.register(deadline: loop.now + .seconds(10)) { late.add() }
        _ = watchdog.register(deadline: loop.now + .seconds(1)) { early.add() }
        await loop.advanceTime(by: .seconds(1))
        #expect(early.value == 1)
        #expect(late.value == 0)
        await loop.advanceTime(by: .seconds(9))
        #expect(late.value == 1)
        await loop.shutdownGracefully()
    }

    /// Entries registered and removed from many tasks at once, on a real event loop: each entry left
    /// runs exactly once, and a removed one at most once (only when its deadline came first).
    @Test func entriesFromManyTasksEachRunOnce() async {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let watchdog = DeadlineWatchdog(eventLoop: group.next())
        let kept = 4 * 500
        let runs = Tallies(count: 2 * kept)
        let (allRan, signal) = AsyncStream.makeStream(of: Void.self)
        let keptRuns = Tally()
        await withTaskGroup(of: Void.self) { tasks in
            for task in 0..<4 {
                tasks.addTask {
                    for round in 0..<500 {
                        let index = 2 * (task * 500 + round)
                        // Deadlines 0 to 2 ms away, so that the timer fires while others register.
                        let delay = TimeAmount.microseconds(Int64(round % 3) * 1_000)
                        _ = watchdog.register(deadline: .now() + delay) {
                            runs.add(at: index)
                            if keptRuns.add() == kept { signal.finish() }
                        }
                        let removed = watchdog.register(deadline: .now() + delay) {
                            runs.add(at: index + 1)
                        }
                        watchdog.remove(removed)
                    }
                }
            }
        }
        for await _ in allRan {}
        let counts = runs.values
        #expect(counts.enumerated().allSatisfy { $0.offset.isMultiple(of: 2) ? $0.element == 1 : $0.element <= 1 })
        try? await group.shutdownGracefully()
    }

    /// An operation that ignores its cancellation: the caller gets `timedOut` at the deadline, on the
    /// watchdog's clock.
    @Test func anOperationThatNeverEndsTimesOutAtTheDeadline() async {
        let (loop, watchdog) = Self.makeWatchdog()
        let release = Release()
        let call = Task { await withDeadline(.seconds(5), watchdog: watchdog) { await release.wait() } }
        await waitUntil { watchdog.pendingCount == 1 && watchdog.timersScheduled == 1 }
        await loop.advanceTime(by: .milliseconds(4_999))
        #expect(watchdog.pendingCount == 1)
        await loop.advanceTime(by: .milliseconds(1))
        guard case .timedOut = await call.value else {
            Issue.record("the call did not time out")
            return
        }
        release.open()
        await loop.shutdownGracefully()
    }

    /// A caller cancelled first: the late action runs at the deadline if the operation still runs then,
    /// and never if it ended first (its deadline is then removed).
    @Test(arguments: [true, false])
    func aCancelledCallerKeepsTheDeadlineForItsOperation(operationEndsFirst: Bool) async {
        let (loop, watchdog) = Self.makeWatchdog()
        let release = Release()
        let late = Tally()
        let call = Task {
            await withDeadline(.seconds(5), watchdog: watchdog, pastDeadlineAfterCancellation: { late.add() }) {
                await release.wait()
            }
        }
        await waitUntil { watchdog.pendingCount == 1 && watchdog.timersScheduled == 1 }
        call.cancel()
        guard case .cancelled = await call.value else {
            Issue.record("the call did not end as cancelled")
            return
        }
        #expect(watchdog.pendingCount == 1)
        if operationEndsFirst {
            release.open()
            await waitUntil { watchdog.pendingCount == 0 }
        }
        await loop.advanceTime(by: .seconds(5))
        #expect(late.value == (operationEndsFirst ? 0 : 1))
        #expect(watchdog.pendingCount == 0)
        release.open()
        await loop.shutdownGracefully()
    }

    /// An operation that ends in time: its result, and its deadline removed.
    @Test func anOperationThatEndsInTimeRemovesItsDeadline() async {
        let (loop, watchdog) = Self.makeWatchdog()
        guard case .finished(.success(42)) = await withDeadline(.seconds(5), watchdog: watchdog, { 42 }) else {
            Issue.record("the call did not finish with its result")
            return
        }
        await waitUntil { watchdog.pendingCount == 0 }
        await loop.shutdownGracefully()
    }

    /// Yields until `condition` holds (the operation's task registers and ends on its own).
    private func waitUntil(_ condition: @Sendable () -> Bool) async {
        while !condition() { await Task.yield() }
    }
}
