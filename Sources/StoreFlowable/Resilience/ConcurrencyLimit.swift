/// A limit on how many operations run at once, for example the requests sent to one origin.
///
/// Create one limit per origin you want to protect and pass the same object to every place that calls
/// that origin: one limit may be shared by many keys, stores and managers. Each call to
/// ``run(isolation:_:)`` takes one of the limit's permits for the duration of its operation.
///
/// ```swift
/// let api = ConcurrencyLimit(maxConcurrent: 4)
/// let user = try await api.run { try await client.fetchUser(id) }
/// ```
///
/// Promises:
/// - At most `maxConcurrent` operations run at once, whatever the number of callers.
/// - Callers that have to wait are served in the order they called ``run(isolation:_:)`` (first come,
///   first served); a newcomer never takes a permit while an earlier caller waits.
/// - A caller cancelled while it waits leaves the queue at once, throws `CancellationError` and never
///   runs its operation. A caller already cancelled when it calls ``run(isolation:_:)`` throws
///   `CancellationError` at once without taking a permit.
/// - Every permit taken is given back exactly once: when the operation returns or throws, or, for a
///   caller cancelled just as a permit was handed to it, before it throws `CancellationError`. So
///   cancelling callers at any moment never loses a permit and never lets more operations run.
/// - No task is created: the operation runs on the caller's task, in the caller's isolation.
/// - With a bound on the queue (`maxQueued`), at most that many callers wait at once: a caller that
///   finds every permit taken and the queue full throws ``ConcurrencyLimitError/queueFull(maxConcurrent:maxQueued:)``
///   at once, takes no permit, never runs its operation and changes nothing for the others. Without
///   a bound (the default), nobody is refused.
///
/// Waiting costs no thread; the limit's bookkeeping holds a lock only for a few instructions and never
/// while running or resuming anyone's code.
///
/// An operation must not wait for another operation of the same limit: once every permit is held by
/// operations that wait, none of them ever runs. In stores, an origin that waits for another store's
/// fetch behind the same limit (reading another key from inside `fetchDataFromOrigin()`) can wait for
/// ever; give the store read from inside an origin a limit of its own, or none.
public final class ConcurrencyLimit: Sendable {
    /// The permit machine, with continuations as its waiters.
    private typealias State = ConcurrencyLimitState<CheckedContinuation<Void, any Error>>

    /// What the lock guards.
    private struct Guarded: Sendable {
        var state: State
        /// The id the next caller that has to wait gets.
        var nextID: UInt64 = 0
    }

    // Lock rule (see `PthreadMutex`): code under this lock only reads and writes `Guarded`; the
    // continuations it returns are resumed after unlocking.
    private let guarded: LockedValue<Guarded>

    /// The greatest number of operations that may run at once (at least 1).
    public let maxConcurrent: Int

    /// The greatest number of callers that may wait for a permit at once, or `nil` for no bound.
    public let maxQueued: Int?

    /// Creates a limit with `maxConcurrent` permits, all free.
    ///
    /// Values of `maxConcurrent` below 1 (zero or negative) count as 1: the limit then runs one
    /// operation at a time. Values of `maxQueued` below 0 count as 0: a caller that finds no free permit
    /// is then refused at once. It never traps on a value.
    ///
    /// A bound on the queue is load shedding: when the operations slow down (a slow origin), callers
    /// beyond `maxConcurrent + maxQueued` fail fast with ``ConcurrencyLimitError/queueFull(maxConcurrent:maxQueued:)``
    /// instead of piling up, so a caller never waits longer than about `maxQueued / maxConcurrent + 1`
    /// operations' time for its own to start, and the number of waiting tasks stays bounded.
    ///
    /// - Parameters:
    ///   - maxConcurrent: The greatest number of operations that may run at once.
    ///   - maxQueued: The greatest number of callers that may wait at once; `nil` (the default) for no
    ///     bound.
    public init(maxConcurrent: Int, maxQueued: Int? = nil) {
        let state = State(limit: maxConcurrent, maxQueued: maxQueued)
        self.maxConcurrent = state.limit
        self.maxQueued = state.maxQueued
        guarded = LockedValue(Guarded(state: state))
    }

    /// How many operations hold a permit now, at most ``maxConcurrent``.
    ///
    /// It counts callers from the moment they are given a permit until their operation has ended, so a
    /// caller just handed a permit whose task has not resumed yet counts as running. The value may be
    /// out of date as soon as it is returned when other tasks use the limit; it is meant for tests and
    /// metrics.
    public var runningCount: Int {
        guarded.withLock { $0.state.running }
    }

    /// How many callers wait for a permit now.
    ///
    /// A cancelled caller stops counting as soon as its cancellation is seen. The value may be out of
    /// date as soon as it is returned when other tasks use the limit; it is meant for tests and metrics.
    public var queuedCount: Int {
        guarded.withLock { $0.state.queuedCount }
    }

    /// Runs `operation` once a permit is free and returns what it returns.
    ///
    /// When fewer than ``maxConcurrent`` operations run and nobody waits, `operation` starts at once.
    /// Otherwise the caller waits, without blocking a thread, behind every caller that called earlier,
    /// until an operation ends and hands it its permit. `operation` runs on the caller's task and in the
    /// caller's isolation, so it may use the caller's actor-isolated state and return a value that is
    /// not `Sendable`. The permit is given back when `operation` returns or throws.
    ///
    /// Cancellation: a caller cancelled before the call, or while it waits, throws `CancellationError`
    /// without running `operation`, and a waiting caller leaves the queue at once. A caller whose
    /// permit is handed over at the moment it is cancelled passes the permit on to the next caller and
    /// throws `CancellationError` without running `operation`. Once `operation` has started, it decides
    /// itself how to react to cancellation.
    ///
    /// - Parameters:
    ///   - isolation: The actor `operation` runs on; defaults to the caller's.
    ///   - operation: The work to run while holding a permit.
    /// - Returns: What `operation` returned.
    /// - Throws: `CancellationError` when the caller was cancelled before `operation` started;
    ///   ``ConcurrencyLimitError/queueFull(maxConcurrent:maxQueued:)`` when every permit was taken and
    ///   the queue was full; otherwise what `operation` throws.
    public func run<T>(
        isolation: isolated (any Actor)? = #isolation,
        _ operation: () async throws -> T
    ) async throws -> T {
        try await acquirePermit(isolation: isolation)
        defer { releasePermit() }
        return try await operation()
    }

    /// Returns holding a permit, or throws `CancellationError` or ``ConcurrencyLimitError`` holding none.
    private func acquirePermit(isolation: isolated (any Actor)?) async throws {
        try Task.checkCancellation()
        let acquisition = guarded.withLock { guarded -> (UInt64, State.Acquisition) in
            let id = guarded.nextID
            guarded.nextID &+= 1  // 2^64 calls would take centuries; wrapping never traps.
            return (id, guarded.state.acquire(id: id))
        }
        let id: UInt64
        switch acquisition {
        case (_, .granted): return
        case (let queued, .queued): id = queued
        case (_, .refused):
            throw ConcurrencyLimitError.queueFull(maxConcurrent: maxConcurrent, maxQueued: maxQueued ?? 0)
        }

        // The caller holds its place in line from here. The cancellation handler may run before the
        // continuation is attached (or during the wait): it removes the entry, and `attach` then tells
        // the caller so. The permit may likewise be handed to the entry before the attach, which
        // `attach` also tells. Either way the continuation is resumed exactly once.

        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let attachment = guarded.withLock { $0.state.attach(continuation, to: id) }
                switch attachment {
                case .waiting: break
                case .granted: continuation.resume()
                case .abandoned: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            // If the entry was already handed the permit, the waiter sees its cancellation below and
            // passes the permit on.
            if case .removed(let waiter) = guarded.withLock({ $0.state.abandon(id: id) }) {
                waiter?.resume(throwing: CancellationError())
            }
        }
        // The permit was handed over at about the moment the caller was cancelled: `operation` has not
        // started, so the permit goes on to the next caller.
        if Task.isCancelled {
            releasePermit()
            throw CancellationError()
        }
    }

    /// Gives a permit back, handing it to the oldest waiting caller if there is one.
    private func releasePermit() {
        let next = guarded.withLock { $0.state.release() }
        next?.resume()
    }
}
