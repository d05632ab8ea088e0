/// The cancel switch of one origin fetch: the task running it, and whether it was cancelled.
///
/// The state manager creates the handle inside its critical region (no user code runs then); the store
/// starts the task and cancels it outside. A handle cancelled before its task starts starts it cancelled.
final class FlightHandle: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var isCancelled = false
    }

    private let state = LockedValue(State())

    /// Creates a handle whose task has not started.
    init() {}

    /// Starts `operation` in a new unstructured task; if the handle was already cancelled, the task
    /// starts cancelled (so the fetch pipeline reports back without calling the origin).
    ///
    /// - Parameter operation: The fetch pipeline to run.
    func start(_ operation: @escaping @Sendable () async -> Void) {
        let task = state.withLock { state -> Task<Void, Never>? in
            guard state.task == nil else { return nil }
            let task = Task(operation: operation)
            state.task = task
            return state.isCancelled ? task : nil
        }
        task?.cancel()
    }

    /// Cancels the task, or prevents it from starting. Cancellation handlers of the user's fetch run on
    /// the calling thread, after the lock is released.
    func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.isCancelled = true
            return state.task
        }
        task?.cancel()
    }

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }
}
