import Dispatch
import NIOEmbedded
import PostgresNIO
import Synchronization
import Testing

@testable import StoreFlowablePostgres

/// Edge cases of ``DeadlineWatchdog`` and ``withDeadline(_:watchdog:pastDeadlineAfterCancellation:_:)``
/// found in review: timers replaced before they were kept, timeouts at the bounds.
@Suite(.timeLimit(.minutes(1)))
struct DeadlineWatchdogReviewTests {
    /// A timer replaced by an earlier one between being scheduled and being kept as the one that counts
    /// is cancelled all the same: left on the loop, a timer for a statement without timeout
    /// (`.seconds(.max)`, 146 years) would stay there, with what it holds, for as long.
    @Test func aTimerReplacedBeforeItWasKeptIsCancelled() async {
        let loop = HookedLoop()
        let watchdog = DeadlineWatchdog(eventLoop: loop, now: { loop.testing.now })
        let runs = Tally()
        // The far timer's `scheduleTask` returns; before the watchdog keeps it, an earlier deadline
        // comes (another thread, here run from the hook).
        loop.afterNextSchedule {
            _ = watchdog.register(deadline: loop.testing.now + .seconds(1)) { runs.add() }
        }
        _ = watchdog.register(deadline: loop.testing.now + .nanoseconds(Int64(1) << 62)) {}
        await loop.testing.advanceTime(by: .seconds(1))
        #expect(runs.value == 1)
        // Left: the timer set again, at the fire, for the far entry. The first far one is not.
        await loop.testing.run()
        #expect(loop.scheduledCount == 3)
        #expect(loop.pendingTimers == 1)
        await loop.testing.shutdownGracefully()
    }

    /// Removing an entry releases its action after the lock: what the action holds may run code when
    /// it goes (a `deinit`), and that code may use the watchdog (here it reads it; under the lock, that
    /// was a recursive lock, a crash).
    @Test func anEntryRemovedReleasesItsActionOutsideTheLock() async {
        let loop = NIOAsyncTestingEventLoop()
        let watchdog = DeadlineWatchdog(eventLoop: loop, now: { loop.now })
        let seen = Tally()
        let entry = register(on: watchdog, holding: ReadsWatchdogWhenReleased(watchdog, into: seen))
        watchdog.remove(entry)
        #expect(seen.value == 1)
        await loop.shutdownGracefully()
    }

    /// Registers an entry whose action is the only holder of `holder`.
    private func register(
        on watchdog: DeadlineWatchdog, holding holder: ReadsWatchdogWhenReleased
    ) -> DeadlineWatchdog.Entry {
        watchdog.register(deadline: watchdog.now() + .seconds(1)) { holder.touch() }
    }

    /// Timeouts of zero and below pass at once, on the loop; the caller gets `timedOut`.
    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-5), .seconds(Int64.min)])
    func aTimeoutOfZeroOrLessPassesAtOnce(timeout: Duration) async {
        let loop = HookedLoop()
        let watchdog = DeadlineWatchdog(eventLoop: loop, now: { loop.testing.now })
        let release = Release()
        let call = Task { await withDeadline(timeout, watchdog: watchdog) { await release.wait() } }
        // Once the timer is on the testing loop's queue, `run()` comes after it.
        while loop.scheduledCount == 0 { await Task.yield() }
        await loop.testing.run()
        guard case .timedOut = await call.value else {
            Issue.record("the call did not time out")
            return
        }
        #expect(watchdog.pendingCount == 0)
        release.open()
        await loop.testing.shutdownGracefully()
    }

    /// A caller already cancelled when it calls: `whenCallerCancelled` has run before the operation's
    /// first step (the operation's task, unstructured, is not cancelled itself until the caller has
    /// resumed), and the caller gets `cancelled`, although the operation, which saw it and gave up,
    /// may end first.
    @Test func aCallerAlreadyCancelledIsToldBeforeTheOperationStarts() async {
        let loop = NIOAsyncTestingEventLoop()
        let watchdog = DeadlineWatchdog(eventLoop: loop, now: { loop.now })
        let told = Tally()
        let sawIt = Tally()
        let ended = Release()
        let call = Task { () async -> DeadlineOutcome<Int> in
            withUnsafeCurrentTask { $0?.cancel() }
            return await withDeadline(
                .seconds(10), watchdog: watchdog, whenCallerCancelled: { told.add() },
                deliveringEarly: { _ in
                    defer { ended.open() }
                    guard told.value == 0 else {
                        sawIt.add()
                        throw CancellationError()
                    }
                    return 1
                })
        }
        guard case .cancelled = await call.value else {
            Issue.record("the cancelled caller was not told it was cancelled")
            return
        }
        await ended.wait()
        #expect(told.value == 1)
        #expect(sawIt.value == 1)
        #expect(watchdog.pendingCount == 0)
        await loop.shutdownGracefully()
    }

    /// No timeout (`.seconds(.max)`): the deadline does not wrap around to a passed one, and a shorter
    /// timeout registered after it still passes at its own time.
    @Test func theLongestTimeoutDoesNotWrapAround() async {
        let loop = HookedLoop()
        let watchdog = DeadlineWatchdog(eventLoop: loop, now: { loop.testing.now })
        let release = Release()
        let forever = Task { await withDeadline(.seconds(Int64.max), watchdog: watchdog) { await release.wait() } }
        while loop.scheduledCount < 1 { await Task.yield() }
        let short = Task { await withDeadline(.seconds(1), watchdog: watchdog) { await release.wait() } }
        while loop.scheduledCount < 2 { await Task.yield() }
        await loop.testing.advanceTime(by: .seconds(1))
        guard case .timedOut = await short.value else {
            Issue.record("the short call did not time out")
            return
        }
        await loop.testing.advanceTime(by: .seconds(100 * 365 * 24 * 3_600))
        #expect(watchdog.pendingCount == 1)
        release.open()
        guard case .finished(.success) = await forever.value else {
            Issue.record("the call without timeout did not finish")
            return
        }
        await loop.testing.shutdownGracefully()
    }
}

/// An event loop that forwards to a testing loop, records the timers scheduled on it, and can run a hook
/// just after one is scheduled (as another thread could then).
private final class HookedLoop: EventLoop, Sendable {
    let testing = NIOAsyncTestingEventLoop()
    private let state = Mutex<(hook: (@Sendable () -> Void)?, scheduled: Int, pending: Int)>((nil, 0, 0))

    /// Runs `hook` after the next `scheduleTask` returns, once.
    func afterNextSchedule(_ hook: @escaping @Sendable () -> Void) { state.withLock { $0.hook = hook } }

    /// How many timers were scheduled.
    var scheduledCount: Int { state.withLock { $0.scheduled } }

    /// How many timers neither ran nor were cancelled.
    var pendingTimers: Int { state.withLock { $0.pending } }

    var inEventLoop: Bool { testing.inEventLoop }
    var now: NIODeadline { testing.now }

    func execute(_ task: @escaping @Sendable () -> Void) { testing.execute(task) }

    func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        let scheduled = testing.scheduleTask(deadline: deadline, task)
        let hook = state.withLock { state in
            state.scheduled += 1
            state.pending += 1
            defer { state.hook = nil }
            return state.hook
        }
        scheduled.futureResult.whenComplete { _ in self.state.withLock { $0.pending -= 1 } }
        hook?()
        return scheduled
    }

    func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        scheduleTask(deadline: now + delay, task)
    }

    func preconditionInEventLoop(file: StaticString, line: UInt) {
        testing.preconditionInEventLoop(file: file, line: line)
    }

    func preconditionNotInEventLoop(file: StaticString, line: UInt) {
        testing.preconditionNotInEventLoop(file: file, line: line)
    }

    func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
        testing.shutdownGracefully(queue: queue, callback)
    }
}

/// An object that reads its watchdog when it is released.
private final class ReadsWatchdogWhenReleased: Sendable {
    private let watchdog: DeadlineWatchdog
    private let seen: Tally

    init(_ watchdog: DeadlineWatchdog, into seen: Tally) {
        self.watchdog = watchdog
        self.seen = seen
    }

    func touch() {}

    deinit {
        _ = watchdog.pendingCount
        seen.add()
    }
}
