import Synchronization

/// A one-time signal from a change listener's session to its connect deadline: "`LISTEN` succeeded".
///
/// One task waits (``wait()``), another signals once (``signal()``); the waiter also returns when its
/// task is cancelled. A lock, not an actor: signalling never suspends.
final class ListeningSignal: Sendable {
    private enum State {
        /// Not signalled, nobody waiting.
        case pending
        /// Not signalled, the waiter suspended.
        case waiting(CheckedContinuation<Void, Never>)
        /// Signalled (or the waiter was cancelled): every wait returns at once.
        case done
    }

    private let state = Mutex(State.pending)

    /// Marks the signal as given and resumes the waiter, if any.
    func signal() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            defer { state = .done }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiter?.resume()
    }

    /// Returns once ``signal()`` was called, or once the calling task is cancelled.
    ///
    /// Called by one task at most; a second concurrent call returns at once.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    guard case .pending = state else { return true }
                    state = .waiting(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            signal()
        }
    }
}
