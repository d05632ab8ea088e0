/// A value that is set once and awaited by one task, with prompt cancellation.
///
/// The store hands one of these to every caller that waits for a fetch (and to every writer that waits
/// for its turn to write the cache). The state manager keeps it and resolves it after the transition,
/// outside its critical region. A waiting task that is cancelled resolves its own box at once with
/// `CancellationError`, without a hop into the state manager.
///
/// Lock rule (see ``PthreadMutex``): the mutex guards only `state`; the continuation is resumed after
/// unlocking. The cancellation handler takes the mutex only for that swap, so a cancelled waiter never
/// waits for a thread that is resuming a continuation.
final class OneShot<Value: Sendable>: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: `state` is only read or written inside `mutex.withLock`, which
    // holds the mutex for the whole access, so no two threads ever touch it at once. The state and its
    // mutex live in this one object (two allocations instead of a separate `LockedValue`'s three).
    private enum State {
        case pending
        case waiting(CheckedContinuation<Value, any Error>)
        case resolved(Result<Value, any Error>)
    }

    private var state = State.pending
    private let mutex = PthreadMutex()

    /// Creates an unresolved box.
    init() {}

    /// Sets the outcome. Only the first call has an effect; later calls are ignored.
    ///
    /// - Parameter result: The value or error handed to the waiting task.
    /// - Returns: `true` when this call resolved the box.
    @discardableResult
    func resolve(_ result: Result<Value, any Error>) -> Bool {
        let (didResolve, continuation) = mutex.withLock { () -> (Bool, CheckedContinuation<Value, any Error>?) in
            switch state {
            case .pending:
                state = .resolved(result)
                return (true, nil)
            case .waiting(let continuation):
                state = .resolved(result)
                return (true, continuation)
            case .resolved:
                return (false, nil)
            }
        }
        // Resumed outside the lock: resuming schedules the waiting task and never runs it inline.
        continuation?.resume(with: result)
        return didResolve
    }

    /// Waits for the outcome.
    ///
    /// - Parameter cancellable: When `true`, cancelling the waiting task resolves the box with
    ///   `CancellationError` at once.
    /// - Returns: The value the box was resolved with.
    /// - Throws: The error the box was resolved with, or `CancellationError` when `cancellable` and the
    ///   task was cancelled first.
    func value(cancellable: Bool) async throws -> Value {
        if cancellable {
            return try await withTaskCancellationHandler {
                try await wait()
            } onCancel: {
                resolve(.failure(CancellationError()))
            }
        }
        return try await wait()
    }

    private func wait() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Value, any Error>? = mutex.withLock {
                switch state {
                case .pending:
                    state = .waiting(continuation)
                    return nil
                case .resolved(let result):
                    return result
                case .waiting:
                    preconditionFailure("OneShot awaited by two tasks")
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
