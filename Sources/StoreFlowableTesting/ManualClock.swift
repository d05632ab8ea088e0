import StoreFlowable

/// A `Clock` for tests that moves only when told to: inject it where code sleeps (interrupts, timeouts,
/// retries), then ``advance(by:)`` it to wake exactly the sleepers whose deadline has come, with no real
/// waiting.
///
/// ```swift
/// let clock = ManualClock()
/// let loads = LoadableController<String>(clock: clock)
/// loads.load(interrupts: [.seconds(2)], onInterrupt: { _ in throw TimedOut() }) { try await slowWork() }
/// await clock.sleepers(atLeast: 1)   // the interrupt's timer is waiting
/// clock.advance(by: .seconds(2))     // the interrupt fires now
/// ```
///
/// Every method may be called from any task, concurrently. A sleeper whose task is cancelled throws
/// `CancellationError` at once and stops counting as a sleeper.
public final class ManualClock: Clock, Sendable {
    /// A point on the clock: the time since the clock was made.
    public struct Instant: InstantProtocol, Sendable, CustomStringConvertible {
        /// How long after the clock's start this instant is.
        public let offset: Duration

        /// Creates the instant `offset` after the clock's start.
        ///
        /// - Parameter offset: The time since the start.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The instant `duration` later.
        ///
        /// - Parameter duration: How far to move.
        /// - Returns: The later (or, for a negative duration, earlier) instant.
        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        /// The time from this instant to `other`.
        ///
        /// - Parameter other: Another instant.
        /// - Returns: `other` minus this instant.
        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        /// Whether `lhs` comes before `rhs`.
        ///
        /// - Parameters:
        ///   - lhs: An instant.
        ///   - rhs: Another instant.
        /// - Returns: `true` when `lhs` is earlier.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        /// The offset, such as `2.0 seconds`.
        public var description: String { "\(offset)" }
    }

    /// A task waiting in ``sleep(until:tolerance:)`` or ``sleepers(atLeast:)``.
    private struct Waiters {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: (deadline: Instant, continuation: CheckedContinuation<Void, any Error>)] = [:]
        /// Sleepers cancelled before their continuation was stored.
        var cancelledEarly: Set<Int> = []
        var counters: [Int: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
        /// Counters cancelled before their continuation was stored.
        var counterCancelledEarly: Set<Int> = []

        /// Removes and returns the counters waiting for at most the current number of sleepers.
        mutating func satisfiedCounters() -> [CheckedContinuation<Void, Never>] {
            let ready = counters.filter { $0.value.count <= sleepers.count }
            for id in ready.keys { counters.removeValue(forKey: id) }
            return ready.values.map(\.continuation)
        }
    }

    private let waiters = LockedValue(Waiters())

    /// Creates a clock at offset zero.
    public init() {}

    /// The current instant.
    public var now: Instant { waiters.withLock { $0.now } }

    /// The smallest step of the clock: a nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are sleeping on the clock now.
    public var sleeperCount: Int { waiters.withLock { $0.sleepers.count } }

    /// Sleeps until ``advance(by:)`` moves the clock to `deadline` or past it; returns at once when
    /// the clock is there already.
    ///
    /// - Parameters:
    ///   - deadline: When to wake.
    ///   - tolerance: Ignored: the clock wakes sleepers exactly.
    /// - Throws: `CancellationError` when the sleeping task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = waiters.withLock { waiters -> Int in
            waiters.nextID += 1
            return waiters.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, counters) = waiters.withLock {
                    waiters -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                    if waiters.cancelledEarly.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= waiters.now { return (.success(()), []) }
                    waiters.sleepers[id] = (deadline, continuation)
                    return (nil, waiters.satisfiedCounters())
                }
                if let outcome { continuation.resume(with: outcome) }
                for counter in counters { counter.resume() }
            }
        } onCancel: {
            let sleeper = waiters.withLock { waiters in
                let sleeper = waiters.sleepers.removeValue(forKey: id)
                if sleeper == nil { waiters.cancelledEarly.insert(id) }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        // A sleeper that finished before its cancellation handler ran leaves nothing behind.
        waiters.withLock { _ = $0.cancelledEarly.remove(id) }
    }

    /// Moves the clock forward by `duration` and wakes every sleeper whose deadline has come, in the
    /// order of their deadlines.
    ///
    /// - Parameter duration: How far to move; a negative duration does nothing.
    public func advance(by duration: Duration) {
        let woken = waiters.withLock { waiters -> [CheckedContinuation<Void, any Error>] in
            guard duration > .zero else { return [] }
            waiters.now = waiters.now.advanced(by: duration)
            let now = waiters.now
            // By deadline, then in the order they went to sleep.
            let due = waiters.sleepers.filter { $0.value.deadline <= now }.sorted {
                ($0.value.deadline.offset, $0.key) < ($1.value.deadline.offset, $1.key)
            }
            for (id, _) in due { waiters.sleepers.removeValue(forKey: id) }
            return due.map(\.value.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once at least `count` tasks are sleeping on the clock at the same time: a test calls it
    /// before ``advance(by:)`` to be sure the code under test has started its timers. It also returns
    /// when the calling task is cancelled (by a test's time limit, say).
    ///
    /// - Parameter count: How many sleepers to wait for.
    public func sleepers(atLeast count: Int) async {
        let id = waiters.withLock { waiters -> Int in
            waiters.nextID += 1
            return waiters.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = waiters.withLock { waiters -> Bool in
                    if waiters.counterCancelledEarly.remove(id) != nil { return true }
                    guard waiters.sleepers.count < count else { return true }
                    waiters.counters[id] = (count, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let counter = waiters.withLock { waiters in
                let counter = waiters.counters.removeValue(forKey: id)
                if counter == nil { waiters.counterCancelledEarly.insert(id) }
                return counter
            }
            counter?.continuation.resume()
        }
        waiters.withLock { _ = $0.counterCancelledEarly.remove(id) }
    }
}
