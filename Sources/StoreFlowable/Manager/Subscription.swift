/// One `publish()` stream as the state manager sees it: the stream's continuation and the sequence
/// number of the last state delivered to it.
///
/// Effects run outside the state manager, on whichever task caused them, so two emissions of a key can
/// reach a stream in the opposite order to the one the state manager decided. Each emission carries its
/// place in the key's order; the subscription delivers it only if it is newer than the last one it
/// delivered, so a stream always ends on the latest state. The check and the `yield` happen under one
/// lock; yielding runs no user code.
final class Subscription<Data: Sendable>: Sendable {
    private let continuation: AsyncStream<LoadingState<Data>>.Continuation
    private let lastDelivered = LockedValue<UInt64>(0)

    /// Wraps the continuation of a `publish()` stream.
    init(_ continuation: AsyncStream<LoadingState<Data>>.Continuation) {
        self.continuation = continuation
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
            continuation.yield(state)
        }
    }
}
