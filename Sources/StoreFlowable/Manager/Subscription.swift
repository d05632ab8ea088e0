/// One `publish()` stream as the state manager sees it: how to yield to the stream, whether it is
/// registered, and the sequence number of the last state delivered to it.
///
/// **Registration.** A stream can end (its consumer cancelled or left the loop) before the task that
/// registers it reaches the state manager. Registering records the id under the lock; the termination
/// handler records that the stream ended. Whoever comes second sees the other's mark, so a subscriber
/// is removed exactly once and a dead stream is never left registered.
///
/// **Order.** Effects run outside the state manager, on whichever task caused them, so two emissions of
/// a key can reach a stream in the opposite order to the one the state manager decided. Each emission
/// carries its place in the key's order; the subscription delivers it only if it is newer than the last
/// one it delivered, so a stream always ends on the latest state. The check and the `yield` happen under
/// one lock; yielding runs no user code (a paged store's presentation only reshapes the state).
///
/// Both live in one object with one mutex: a subscription costs two allocations besides its stream.
final class Subscription<Data: Sendable>: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: `phase` and `lastDelivered` are only read or written inside
    // `mutex.withLock`, which holds the mutex for the whole access; `sink` is immutable and Sendable.
    private enum Sink: Sendable {
        /// The stream's own continuation, for a stream of the key's states as they are.
        case direct(AsyncStream<LoadingState<Data>>.Continuation)
        /// Yields each state as the stream shows it.
        case presenting(@Sendable (LoadingState<Data>) -> Void)
    }

    private enum Phase {
        /// Not registered yet, and not terminated.
        case pending
        /// Registered under this id.
        case active(UInt64)
        /// The stream ended; it must not be (or stay) registered.
        case terminated
    }

    private let sink: Sink
    private let mutex = PthreadMutex()
    private var phase = Phase.pending
    private var lastDelivered: UInt64 = 0

    /// Wraps the continuation of a `publish()` stream that yields the key's states as they are.
    init(_ continuation: AsyncStream<LoadingState<Data>>.Continuation) {
        sink = .direct(continuation)
    }

    /// Wraps the continuation of a `publish()` stream that yields each state as `present` shows it.
    ///
    /// - Parameters:
    ///   - continuation: The stream's continuation.
    ///   - present: Turns a state of the key into the state the stream shows; runs under the lock, so it
    ///     must be quick and must not block.
    init<Shown: Sendable>(
        _ continuation: AsyncStream<LoadingState<Shown>>.Continuation,
        presenting present: @escaping @Sendable (LoadingState<Data>) -> LoadingState<Shown>
    ) {
        sink = .presenting { state in continuation.yield(present(state)) }
    }

    /// Records that the stream is registered under `id`.
    ///
    /// - Returns: `false` when the stream had already terminated; the caller must then remove `id` at once.
    func activate(_ id: UInt64) -> Bool {
        mutex.withLock {
            guard case .pending = phase else { return false }
            phase = .active(id)
            return true
        }
    }

    /// Records that the stream terminated.
    ///
    /// - Returns: The id to remove from the state manager, or `nil` when the stream was not registered
    ///   yet (registration will then see the mark) or was already removed.
    func terminate() -> UInt64? {
        mutex.withLock {
            defer { phase = .terminated }
            if case .active(let id) = phase { return id }
            return nil
        }
    }

    /// Yields `state` unless a newer emission was already delivered.
    ///
    /// - Parameters:
    ///   - state: The state to yield.
    ///   - sequence: The emission's place in the key's order of emissions.
    func deliver(_ state: LoadingState<Data>, sequence: UInt64) {
        mutex.withLock {
            guard sequence > lastDelivered else { return }
            lastDelivered = sequence
            switch sink {
            case .direct(let continuation): continuation.yield(state)
            case .presenting(let yield): yield(state)
            }
        }
    }
}
