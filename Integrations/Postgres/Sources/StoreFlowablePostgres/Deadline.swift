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
/// Cost: one task (the operation's, started on the caller's thread where `Task.immediate` exists) and
/// one entry in the watchdog's table (no timer of its own, no actor): the first of the operation, the
/// deadline and a cancellation to reach the gate resumes the caller.
///
/// When the caller is cancelled first, the deadline still holds for the operation left running:
/// `pastDeadlineAfterCancellation` runs if the deadline passes before the operation ends, so that
/// whoever gave up on it can still bound what it keeps (a statement's connection). It runs on the
/// watchdog's event loop, or on the caller's task when the deadline passed between the caller's
/// cancellation and its return. The deadline is removed as soon as the operation ends.
///
/// - Parameters:
///   - timeout: The longest wait.
///   - watchdog: What keeps the deadline.
///   - pastDeadlineAfterCancellation: Runs once, when the caller was cancelled and the deadline passed
///     with the operation still running.
///   - operation: The work; it runs in a new unstructured task.
/// - Returns: The operation's result, ``DeadlineOutcome/timedOut`` or ``DeadlineOutcome/cancelled``.
func withDeadline<Value: Sendable>(
    _ timeout: Duration, watchdog: DeadlineWatchdog = .shared,
    pastDeadlineAfterCancellation: (@Sendable () -> Void)? = nil,
    _ operation: @escaping @Sendable () async throws -> Value
) async -> DeadlineOutcome<Value> {
    await withDeadline(
        timeout, watchdog: watchdog, pastDeadlineAfterCancellation: pastDeadlineAfterCancellation,
        deliveringEarly: { _ in try await operation() })
}

/// ``withDeadline(_:watchdog:pastDeadlineAfterCancellation:_:)`` for an operation that has its result
/// before it ends: it hands it to the caller with `deliver` as soon as it has it (from any thread), and
/// goes on with what is left (a statement giving its connection back to the pool), still under the
/// deadline. The caller is resumed by the first of `deliver`, the operation's end, the deadline and its
/// cancellation; the operation's own result is then dropped. `deliver` never blocks or calls out but to
/// resume the caller, so it may run on an event loop.
///
/// The operation's task is unstructured: it learns of its caller's cancellation only when the caller,
/// resumed with ``DeadlineOutcome/cancelled``, cancels it, which may be after the operation went on (a
/// connection leased meanwhile). `whenCallerCancelled` tells it at once instead: it runs in the
/// caller's cancellation handler, on the thread that cancels the caller, right after the outcome
/// ``DeadlineOutcome/cancelled`` was decided (unless a result was delivered first); for a caller
/// already cancelled when it calls, before the operation starts. An operation that checks what it
/// sets before each step it must not take for a caller that is gone (sending a statement) never
/// takes it after that; and since the outcome was decided first, what the operation then ends with is
/// dropped.
///
/// - Parameters:
///   - timeout: The longest wait.
///   - watchdog: What keeps the deadline.
///   - pastDeadlineAfterCancellation: As for the operation without early delivery.
///   - whenCallerCancelled: Runs once, synchronously, when the caller's task is cancelled before this
///     returns (at once when it already is); it must not block, suspend or call back into this.
///   - operation: The work, given `deliver`; it runs in a new unstructured task.
/// - Returns: The first result delivered or returned, ``DeadlineOutcome/timedOut`` or
///   ``DeadlineOutcome/cancelled``.
func withDeadline<Value: Sendable>(
    _ timeout: Duration, watchdog: DeadlineWatchdog = .shared,
    pastDeadlineAfterCancellation: (@Sendable () -> Void)? = nil,
    whenCallerCancelled: (@Sendable () -> Void)? = nil,
    deliveringEarly operation:
        @escaping @Sendable (_ deliver: @escaping @Sendable (Result<Value, any Error>) -> Void) async throws -> Value
) async -> DeadlineOutcome<Value> {
    let gate = DeadlineGate<Value>()
    // Capped: a `TimeAmount` is 64-bit nanoseconds (`.seconds(.max)` is a natural way to ask for no
    // timeout); 2^62 ns is 146 years. Negative timeouts pass at once.
    let cappedNanoseconds = min(max(0, timeout.nanoseconds), Int64(1) << 62)
    let deadline = watchdog.register(deadline: watchdog.now() + .nanoseconds(cappedNanoseconds)) {
        if gate.deadlinePassed() { pastDeadlineAfterCancellation?() }
    }
    let run: @Sendable () async -> Void = {
        let result: Result<Value, any Error>
        do {
            result = .success(try await operation { early in gate.deliver(.finished(early)) })
        } catch {
            result = .failure(error)
        }
        gate.operationEnded(.finished(result))
        watchdog.remove(deadline)
    }
    let (work, outcome) = await withTaskCancellationHandler {
        // Started on the caller's thread, which runs it until it first suspends (asking the pool for a
        // connection, writing the statement): a task only enqueued would wake another thread first.
        // Started within the cancellation handler's scope, so that a caller already cancelled has run
        // `whenCallerCancelled` before the operation takes its first step.
        let work: Task<Void, Never>
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            work = Task.immediate(operation: run)
        } else {
            work = Task(operation: run)
        }
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<DeadlineOutcome<Value>, Never>) in
            gate.wait(continuation)
        }
        return (work, outcome)
    } onCancel: {
        gate.callerCancelled()
        whenCallerCancelled?()
    }
    switch outcome {
    case .finished:
        break
    case .timedOut:
        work.cancel()
    case .cancelled:
        work.cancel()
        if let pastDeadlineAfterCancellation {
            if gate.keepDeadlineAfterCancellation() { pastDeadlineAfterCancellation() }
        } else {
            watchdog.remove(deadline)
        }
    }
    return outcome
}

/// Where the first outcome of an operation, its deadline and its caller's cancellation is kept and
/// handed to the waiting caller, exactly once; and, once the caller was cancelled, whether the deadline
/// then passed with the operation still running. A lock, not an actor: nothing here suspends.
private final class DeadlineGate<Value: Sendable>: Sendable {
    private enum Delivery {
        case open
        case waiting(CheckedContinuation<DeadlineOutcome<Value>, Never>)
        case decided(DeadlineOutcome<Value>)
        case delivered
    }

    private struct State {
        var delivery = Delivery.open
        var operationHasEnded = false
        var deadlineHasPassed = false
        /// The caller, cancelled first, keeps the deadline for the operation left running.
        var keepsDeadline = false

        /// Decides `outcome` unless another came first.
        ///
        /// - Returns: The caller to resume with it, when it waits.
        mutating func decide(
            _ outcome: DeadlineOutcome<Value>
        ) -> CheckedContinuation<DeadlineOutcome<Value>, Never>? {
            switch delivery {
            case .open:
                delivery = .decided(outcome)
                return nil
            case .waiting(let continuation):
                delivery = .delivered
                return continuation
            case .decided, .delivered:
                return nil
            }
        }
    }

    private let state = Mutex(State())

    /// The operation ended with `outcome`.
    func operationEnded(_ outcome: DeadlineOutcome<Value>) {
        let waiter = state.withLock { state in
            state.operationHasEnded = true
            return state.decide(outcome)
        }
        waiter?.resume(returning: outcome)
    }

    /// The operation has its result, `outcome`, and goes on: it has not ended.
    func deliver(_ outcome: DeadlineOutcome<Value>) {
        let waiter = state.withLock { $0.decide(outcome) }
        waiter?.resume(returning: outcome)
    }

    /// The caller's task was cancelled.
    func callerCancelled() {
        let waiter = state.withLock { $0.decide(.cancelled) }
        waiter?.resume(returning: .cancelled)
    }

    /// The deadline passed.
    ///
    /// - Returns: Whether the late action runs now: the caller, cancelled first, keeps the deadline,
    ///   and the operation still runs.
    func deadlinePassed() -> Bool {
        let (waiter, late) = state.withLock { state in
            state.deadlineHasPassed = true
            return (state.decide(.timedOut), state.keepsDeadline && !state.operationHasEnded)
        }
        waiter?.resume(returning: .timedOut)
        return late
    }

    /// Keeps the deadline for the operation left running, after the caller was cancelled first.
    ///
    /// - Returns: Whether the deadline already passed with the operation still running: the caller then
    ///   runs the late action itself.
    func keepDeadlineAfterCancellation() -> Bool {
        state.withLock { state in
            if state.operationHasEnded { return false }
            if state.deadlineHasPassed { return true }
            state.keepsDeadline = true
            return false
        }
    }

    /// Resumes `continuation` with the outcome, now if there is one, else when it comes.
    func wait(_ continuation: CheckedContinuation<DeadlineOutcome<Value>, Never>) {
        let ready: DeadlineOutcome<Value>? = state.withLock { state in
            switch state.delivery {
            case .decided(let outcome):
                state.delivery = .delivered
                return outcome
            case .open:
                state.delivery = .waiting(continuation)
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
