/// One `publish()` stream as the state manager sees it: how to yield to the stream and the sequence
/// number of the last state delivered to it.
///
/// Effects run outside the state manager, on whichever task caused them, so two emissions of a key can
/// reach a stream in the opposite order to the one the state manager decided. Each emission carries its
/// place in the key's order; the subscription delivers it only if it is newer than the last one it
/// delivered, so a stream always ends on the latest state. The check and the `yield` happen under one
/// lock; yielding runs no user code (a paged store's presentation only reshapes the state).
final class Subscription<Data: Sendable>: Sendable {
    private let yield: @Sendable (LoadingState<Data>) -> Void
    private let lastDelivered = LockedValue<UInt64>(0)

    /// Wraps the continuation of a `publish()` stream that yields the key's states as they are.
    init(_ continuation: AsyncStream<LoadingState<Data>>.Continuation) {
        yield = { state in continuation.yield(state) }
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
        yield = { state in continuation.yield(present(state)) }
    }

    /// Yields `state` unless a newer emission was already delivered.
    ///
    /// - Parameters:
    ///   - state: The state to yield.
    ///   - sequence: The emission's place in the key's order of emissions.
    func deliver(_ state: LoadingState<Data>, sequence: UInt64) {
        lastDelivered.withLock { last in
            guard sequence > last else { return }
            last = sequence
            yield(state)
        }
    }
}
