/// One `publish()` stream as the state manager sees it: how to yield to the stream, whether it is
/// registered, and which emission it last accepted.
///
/// **Registration.** A stream can end (its consumer cancelled or left the loop) before the task that
/// registers it reaches the state manager. Registering records the id under the lock; the termination
/// handler records that the stream ended. Whoever comes second sees the other's mark, so a subscriber
/// is removed exactly once and a dead stream is never left registered.
///
/// **Order.** Effects run outside the state manager, on whichever task caused them, so two emissions of
/// a key can reach a stream in the opposite order to the one the state manager decided. Each emission
/// carries its place in the key's order; the subscription accepts it only if it is newer than the last
/// one it accepted, so a stream never receives an older state after a newer one and always ends on the
/// latest state.
///
/// **Lock rule.** The mutex is never held while yielding into the stream. Yielding resumes the consumer's
/// continuation, which takes the consuming task's status-record lock; cancelling that task holds the
/// same runtime lock while it runs the stream's termination handler, which calls ``terminate()`` and
/// takes this mutex. Holding the mutex across a yield would let the two threads wait for each other for
/// ever. So ``deliver(_:sequence:)`` decides under the lock and yields after unlocking, and one deliverer
/// at a time drains: a deliverer that finds another one yielding leaves its state as the pending one
/// (replacing an older pending state, as the stream's `bufferingNewest(1)` buffer would) and returns;
/// the yielding deliverer picks it up before it stops. Every critical region below only reads and writes
/// the fields next to the mutex.
///
/// Both live in one object with one mutex. The state manager hands states over with their data
/// erased (see ``ErasedData``); each subclass, made where the store's `Data` type is known, turns them
/// back into its stream's states in ``yield(_:)``. (Subclasses rather than a stored closure: one
/// allocation fewer per subscription.)
class Subscription: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: `phase`, `lastAccepted`, `isDelivering` and `pending` are only
    // read or written inside `mutex.withLock`, which holds the mutex for the whole access. Subclasses
    // add only immutable Sendable properties. `yield(_:)` runs outside the lock, by one thread at a time
    // (the one that set `isDelivering`).
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
    /// The sequence number of the newest emission accepted for delivery.
    private var lastAccepted: UInt64 = 0
    /// Whether a thread is yielding to the stream (outside the lock) and will drain `pending`.
    private var isDelivering = false
    /// The newest accepted state that the delivering thread has not yielded yet. Boxed, so that a
    /// subscription that is never delivered to by two threads at once pays one pointer for it, not the
    /// size of a state.
    private var pending: PendingState?

    /// Creates a subscription that is not registered yet.
    init() {}

    /// Hands `state` to the stream; called outside the lock, by one deliverer at a time, at most once
    /// per accepted emission.
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

    /// Records that the stream terminated. Never waits for a delivery: it runs inside the stream's
    /// termination handler, possibly under the runtime's lock of the cancelled consumer task.
    ///
    /// - Returns: The id to remove from the state manager, or `nil` when the stream was not registered
    ///   yet (registration will then see the mark) or was already removed.
    func terminate() -> UInt64? {
        let (id, dropped) = mutex.withLock { () -> (UInt64?, PendingState?) in
            defer { phase = .terminated }
            let dropped = pending
            pending = nil
            if case .active(let id) = phase { return (id, dropped) }
            return (nil, dropped)
        }
        // The dropped state (and the user's data in it) is released here, after unlocking.
        _ = dropped
        return id
    }

    /// Yields `state` unless a newer emission was already accepted.
    ///
    /// Returns without yielding when another thread is delivering to this stream: that thread yields
    /// `state` (or a newer one) before it stops.
    ///
    /// - Parameters:
    ///   - state: The state to yield.
    ///   - sequence: The emission's place in the key's order of emissions.
    func deliver(_ state: LoadingState<ErasedData>, sequence: UInt64) {
        let (mayYield, replaced) = mutex.withLock { () -> (Bool, PendingState?) in
            guard sequence > lastAccepted else { return (false, nil) }
            lastAccepted = sequence
            if case .terminated = phase { return (false, nil) }
            if isDelivering {
                let replaced = pending
                pending = PendingState(state)
                return (false, replaced)
            }
            isDelivering = true
            return (true, nil)
        }
        // A replaced state (and the user's data in it) is released here, after unlocking.
        _ = replaced
        guard mayYield else { return }
        var next = state
        while true {
            yield(next)
            let more = mutex.withLock { () -> LoadingState<ErasedData>? in
                guard let pending else {
                    isDelivering = false
                    return nil
                }
                self.pending = nil
                return pending.state
            }
            guard let more else { return }
            next = more
        }
    }
}

/// A state waiting for a subscription's delivering thread; only made when two threads deliver to one
/// stream at once.
private final class PendingState {
    let state: LoadingState<ErasedData>

    init(_ state: LoadingState<ErasedData>) {
        self.state = state
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
    ///   - present: Turns a state of the key into the state the stream shows; runs outside the lock,
    ///     on the delivering thread, one state at a time, so it should be quick.
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
