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
/// Both live in one object with one mutex. The state manager hands states over with their data
/// erased (see ``ErasedData``); each subclass, made where the store's `Data` type is known, turns them
/// back into its stream's states in ``yield(_:)``. (Subclasses rather than a stored closure: one
/// allocation fewer per subscription.)
class Subscription: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: `phase` and `lastDelivered` are only read or written inside
    // `mutex.withLock`, which holds the mutex for the whole access. Subclasses add only immutable
    // Sendable properties.
    private enum Phase {
        /// Not registered yet, and not terminated.
        case pending
        /// Registered under this id.
        case active(UInt64)
        /// The stream ended; it must not be (or stay) registered.
        case terminated
    }

    private let mutex = PthreadMutex()
    private var phase = Phase.pending
    private var lastDelivered: UInt64 = 0

    /// Creates a subscription that is not registered yet.
    init() {}

    /// Hands `state` to the stream; called under the lock, at most once per emission.
    ///
    /// - Parameter state: The state, with its data erased.
    func yield(_ state: LoadingState<ErasedData>) {
        // Unreachable: the library only creates the two subclasses below, and both override this.
        preconditionFailure("Subscription.yield(_:) must be overridden")
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
    func deliver(_ state: LoadingState<ErasedData>, sequence: UInt64) {
        mutex.withLock {
            guard sequence > lastDelivered else { return }
            lastDelivered = sequence
            yield(state)
        }
    }
}

/// The subscription of a `publish()` stream that yields the key's states as they are.
final class DirectSubscription<Data: Sendable>: Subscription, @unchecked Sendable {
    // Safety of `@unchecked Sendable`: the base class's guarded state is safe as stated there; the only
    // property added here is immutable and Sendable.
    private let continuation: AsyncStream<LoadingState<Data>>.Continuation

    /// Wraps the continuation of the stream.
    init(_ continuation: AsyncStream<LoadingState<Data>>.Continuation) {
        self.continuation = continuation
    }

    override func yield(_ state: LoadingState<ErasedData>) {
        continuation.yield(state.typed(as: Data.self))
    }
}

/// The subscription of a `publish()` stream that yields each state of the key as a presentation shows
/// it (a paged store shows its cached record's data and cursors this way).
final class PresentingSubscription<Data: Sendable, Shown: Sendable>: Subscription, @unchecked Sendable {
    // Safety of `@unchecked Sendable`: the base class's guarded state is safe as stated there; the
    // properties added here are immutable and Sendable.
    private let continuation: AsyncStream<LoadingState<Shown>>.Continuation
    private let present: @Sendable (LoadingState<Data>) -> LoadingState<Shown>

    /// Wraps the continuation of the stream.
    ///
    /// - Parameters:
    ///   - continuation: The stream's continuation.
    ///   - present: Turns a state of the key into the state the stream shows; runs under the lock, so it
    ///     must be quick and must not block.
    init(
        _ continuation: AsyncStream<LoadingState<Shown>>.Continuation,
        presenting present: @escaping @Sendable (LoadingState<Data>) -> LoadingState<Shown>
    ) {
        self.continuation = continuation
        self.present = present
    }

    override func yield(_ state: LoadingState<ErasedData>) {
        continuation.yield(present(state.typed(as: Data.self)))
    }
}
