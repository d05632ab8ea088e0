/// Links a `publish()` stream's termination to its registration in the state manager, whichever
/// happens first.
///
/// A stream can end (its consumer cancelled or left the loop) before the task that registers it reaches
/// the state manager. The registration records the id under a lock; the termination handler records
/// that the stream ended. Whoever comes second sees the other's mark, so a subscriber is removed exactly
/// once and a dead stream is never left registered.
final class SubscriptionRegistration: Sendable {
    private enum State {
        case pending
        case active(UInt64)
        case terminated
    }

    private let state = LockedValue(State.pending)

    /// Creates a registration for a stream that is not registered yet.
    init() {}

    /// Records that the stream is registered under `id`.
    ///
    /// - Returns: `false` when the stream had already terminated; the caller must then remove `id` at once.
    func activate(_ id: UInt64) -> Bool {
        state.withLock { state in
            guard case .pending = state else { return false }
            state = .active(id)
            return true
        }
    }

    /// Records that the stream terminated.
    ///
    /// - Returns: The id to remove from the state manager, or `nil` when the stream was not registered
    ///   yet (registration will then see the mark) or was already removed.
    func terminate() -> UInt64? {
        state.withLock { state in
            defer { state = .terminated }
            if case .active(let id) = state { return id }
            return nil
        }
    }
}
