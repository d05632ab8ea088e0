/// How an operation raced against its deadline ended.
enum DeadlineOutcome<Value: Sendable>: Sendable {
    /// The operation finished first, with this result.
    case finished(Result<Value, any Error>)
    /// The deadline passed first; the operation was cancelled and left to finish on its own.
    case timedOut
}

/// Runs `operation` in a task of its own and waits for it at most `timeout`.
///
/// When the deadline passes first, the operation's task is cancelled and this returns at once, even if
/// the operation ignores the cancellation (a query waiting on a server that stopped answering, with its
/// connection still open): it is left to finish on its own, and its result is dropped. A task group
/// could not promise that, since it waits for every child before returning. Cancelling the calling task
/// cancels the operation, which ends the wait as soon as the operation returns (or at the deadline).
///
/// - Parameters:
///   - timeout: The longest wait.
///   - operation: The work; it runs in a new unstructured task.
/// - Returns: The operation's result, or ``DeadlineOutcome/timedOut``.
func withDeadline<Value: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Value
) async -> DeadlineOutcome<Value> {
    let work = Task<Value, any Error> { try await operation() }
    let outcome = await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<DeadlineOutcome<Value>, Never>) in
            let gate = ResumeGate(continuation)
            let timer = Task {
                // A cancelled sleep means the operation finished first: nothing to do.
                // Capped: `Task.sleep` traps when the deadline does not fit the clock's 64-bit seconds
                // (`.seconds(.max)`, a natural way to ask for no timeout); 2^40 s is 35,000 years.
                guard (try? await Task.sleep(for: min(timeout, .seconds(Int64(1) << 40)))) != nil else { return }
                await gate.resume(with: .timedOut)
            }
            Task {
                let result = await work.result
                timer.cancel()
                await gate.resume(with: .finished(result))
            }
        }
    } onCancel: {
        work.cancel()
    }
    if case .timedOut = outcome { work.cancel() }
    return outcome
}

/// Resumes a continuation once: the first of the operation and its timer to get there wins, the other
/// is ignored.
private actor ResumeGate<Value: Sendable> {
    /// The waiting caller; `nil` once resumed.
    private var continuation: CheckedContinuation<DeadlineOutcome<Value>, Never>?

    /// Creates a gate for `continuation`.
    ///
    /// - Parameter continuation: The caller to resume once.
    init(_ continuation: CheckedContinuation<DeadlineOutcome<Value>, Never>) {
        self.continuation = continuation
    }

    /// Resumes the caller with `outcome` unless it was already resumed.
    ///
    /// - Parameter outcome: The outcome to deliver.
    func resume(with outcome: DeadlineOutcome<Value>) {
        continuation?.resume(returning: outcome)
        continuation = nil
    }
}
