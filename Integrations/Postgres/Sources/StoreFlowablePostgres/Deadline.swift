import PostgresNIO
import Synchronization

/// How an operation raced against its deadline ended.
enum DeadlineOutcome<Value: Sendable>: Sendable {
    /// The operation finished first, with this result.
    case finished(Result<Value, any Error>)
    /// The deadline passed first; the operation was cancelled and left to finish on its own.
    case timedOut
    /// The caller was cancelled first; the operation was cancelled and left to finish on its own.
    case cancelled
}

/// Runs `operation` in a task of its own and waits for it at most `timeout`.
///
/// When the deadline passes first, or the calling task is cancelled, the operation's task is cancelled
/// and this returns at once, even if the operation ignores the cancellation (a query waiting on a server
/// that stopped answering, with its connection still open): it is left to finish on its own, and its
/// result is dropped. A task group could not promise that, since it waits for every child before
/// returning.
///
/// Cost: one task (the operation's) and one timer on an event loop of NIO's shared group (no task, no
/// actor): the first of the operation, the timer and a cancellation to reach the gate resumes the caller.
///
/// When the caller is cancelled first, the deadline still holds for the operation left running:
/// `pastDeadlineAfterCancellation` runs (on an event loop) if the deadline passes before the operation
/// ends, so that whoever gave up on it can still bound what it keeps (a statement's connection). The
/// timer is then cancelled as soon as the operation ends.
///
/// - Parameters:
///   - timeout: The longest wait.
///   - pastDeadlineAfterCancellation: Runs once, when the caller was cancelled and the deadline passed
///     with the operation still running.
///   - operation: The work; it runs in a new unstructured task.
/// - Returns: The operation's result, ``DeadlineOutcome/timedOut`` or ``DeadlineOutcome/cancelled``.
func withDeadline<Value: Sendable>(
    _ timeout: Duration, pastDeadlineAfterCancellation: (@Sendable () -> Void)? = nil,
    _ operation: @escaping @Sendable () async throws -> Value
) async -> DeadlineOutcome<Value> {
    let gate = DeadlineGate<Value>()
    let late = LateDeadline()
    let work = Task<Void, Never> {
        let result: Result<Value, any Error>
        do {
            result = .success(try await operation())
        } catch {
            result = .failure(error)
        }
        gate.finish(.finished(result))
        late.operationEnded()
    }
    // Capped: a `TimeAmount` is 64-bit nanoseconds (`.seconds(.max)` is a natural way to ask for no
    // timeout); 2^62 ns is 146 years. Negative timeouts fire at once.
    let cappedNanoseconds = min(max(0, timeout.nanoseconds), Int64(1) << 62)
    let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(cappedNanoseconds)) {
        gate.finish(.timedOut)
        if late.deadlinePassed() { pastDeadlineAfterCancellation?() }
    }
    let outcome = await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<DeadlineOutcome<Value>, Never>) in
            gate.wait(continuation)
        }
    } onCancel: {
        gate.finish(.cancelled)
    }
    switch outcome {
    case .finished:
        timer.cancel()
    case .timedOut:
        work.cancel()
    case .cancelled:
        work.cancel()
        if let pastDeadlineAfterCancellation {
            if late.arm(timer) { pastDeadlineAfterCancellation() }
        } else {
            timer.cancel()
        }
    }
    return outcome
}

/// The deadline of an operation whose caller was cancelled first: armed by the caller, ended by the
/// operation, passed by the timer, in any order. A lock, not an actor: the timer never suspends.
private final class LateDeadline: Sendable {
    private struct State {
        /// The timer, once the caller armed the deadline; `nil` after it was cancelled or passed.
        var timer: Scheduled<Void>?
        var isArmed = false
        var operationHasEnded = false
        var deadlineHasPassed = false
    }

    private let state = Mutex(State())

    /// Arms the deadline with `timer`, after the caller was cancelled.
    ///
    /// - Parameter timer: The deadline's timer, cancelled when the operation ends first.
    /// - Returns: Whether the deadline already passed with the operation still running: the caller then
    ///   runs the late action itself.
    func arm(_ timer: Scheduled<Void>) -> Bool {
        let (cancel, passed) = state.withLock { state -> (Bool, Bool) in
            if state.operationHasEnded { return (true, false) }
            if state.deadlineHasPassed { return (false, true) }
            state.isArmed = true
            state.timer = timer
            return (false, false)
        }
        if cancel { timer.cancel() }
        return passed
    }

    /// Records that the operation ended, and cancels an armed timer.
    func operationEnded() {
        let timer = state.withLock { state -> Scheduled<Void>? in
            state.operationHasEnded = true
            state.isArmed = false
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
    }

    /// Records that the deadline passed.
    ///
    /// - Returns: Whether the late action runs now: the deadline was armed and the operation still runs.
    func deadlinePassed() -> Bool {
        state.withLock { state in
            state.deadlineHasPassed = true
            state.timer = nil
            defer { state.isArmed = false }
            return state.isArmed && !state.operationHasEnded
        }
    }
}

/// Where the first outcome of an operation, its timer and its caller's cancellation is kept and handed
/// to the waiting caller, exactly once. A lock, not an actor: finishing never suspends.
private final class DeadlineGate<Value: Sendable>: Sendable {
    private enum State {
        case open
        case waiting(CheckedContinuation<DeadlineOutcome<Value>, Never>)
        case decided(DeadlineOutcome<Value>)
        case delivered
    }

    private let state = Mutex(State.open)

    /// Hands `outcome` to the caller unless another outcome came first.
    func finish(_ outcome: DeadlineOutcome<Value>) {
        let waiter: CheckedContinuation<DeadlineOutcome<Value>, Never>? = state.withLock { state in
            switch state {
            case .open:
                state = .decided(outcome)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .decided, .delivered:
                return nil
            }
        }
        waiter?.resume(returning: outcome)
    }

    /// Resumes `continuation` with the outcome, now if there is one, else when it comes.
    func wait(_ continuation: CheckedContinuation<DeadlineOutcome<Value>, Never>) {
        let ready: DeadlineOutcome<Value>? = state.withLock { state in
            switch state {
            case .decided(let outcome):
                state = .delivered
                return outcome
            case .open:
                state = .waiting(continuation)
                return nil
            case .waiting, .delivered:
                // `wait` is called once, by the one caller.
                return nil
            }
        }
        if let ready { continuation.resume(returning: ready) }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at `Int64`'s bounds.
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowAgain ? (seconds < 0 ? .min : .max) : sum
    }
}
