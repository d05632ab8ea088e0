/// The cancel switch of one origin fetch: the task running it, and whether it was cancelled.
///
/// The state manager creates the handle inside its critical region (no user code runs then); the store
/// starts the task and cancels it outside. A handle cancelled before its task starts starts it cancelled.
///
/// **Lock rule.** The lock only guards the two fields below. The task is created and cancelled after
/// unlocking: creating a task and cancelling one (which runs the fetch's cancellation handlers and takes
/// the runtime's lock of that task) never happen under it.
final class FlightHandle: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var isStarted = false
        var isCancelled = false
    }

    private let state = LockedValue(State())

    /// Creates a handle whose task has not started.
    init() {}

    /// Starts `operation` in a new unstructured task; if the handle was already cancelled, or is
    /// cancelled while the task is being created, the task is cancelled at once (so the fetch pipeline
    /// reports back without calling the origin). Only the first call has an effect.
    ///
    /// - Parameter operation: The fetch pipeline to run.
    func start(_ operation: @escaping @Sendable () async -> Void) {
        let mayStart = state.withLock { state -> Bool in
            guard !state.isStarted else { return false }
            state.isStarted = true
            return true
        }
        guard mayStart else { return }
        // The task may begin running before it is stored below: it checks the mark itself first, so a
        // handle cancelled before `start` never runs `operation` uncancelled.
        let task = Task { [self] in
            if isCancelled { withUnsafeCurrentTask { $0?.cancel() } }
            await operation()
        }
        let cancelledMeanwhile = state.withLock { state -> Bool in
            state.task = task
            return state.isCancelled
        }
        if cancelledMeanwhile { task.cancel() }
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
