import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What an ``InstanceProcess`` printed, fed line by line by the thread reading its output, and waited
/// for by the test: each line is taken by at most one wait, in any order (the instance runs its
/// commands concurrently, so the answers of two commands may come in either order).
///
/// The lock also guards the child's process id: the child is signalled only while it has not been
/// reaped, and it is reaped under the same lock, so a signal never reaches a process that reused the
/// id.
final class InstanceOutput: Sendable {
    /// How a wait ended.
    enum Outcome: Sendable {
        /// The first unread line the wait accepted.
        case line(String)
        /// The process ended (with this status) and no unread line was accepted.
        case ended(Int32)
        /// The deadline passed first, or the waiting task was cancelled.
        case timedOut
    }

    private struct Waiter: Sendable {
        /// Accepts a line; `nil` for a wait for the process's end.
        var accepts: (@Sendable (String) -> Bool)?
        var continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State: Sendable {
        /// Lines no wait has taken yet, in order.
        var unread: [String] = []
        /// Every line printed and every command sent (`> command`), in order.
        var transcript: [String] = []
        var waiters: [Int: Waiter] = [:]
        /// Waits that timed out before they were registered.
        var expired: Set<Int> = []
        var nextWaiter = 0
        /// The exit status, once the process is reaped.
        var status: Int32?
    }

    private let state = Mutex(State())
    /// The child's id.
    let pid: pid_t

    init(pid: pid_t) {
        self.pid = pid
    }

    // MARK: Fed by the reading thread

    /// Hands `line` to the first wait that accepts it, else keeps it for later waits.
    func append(_ line: String) {
        let taker: CheckedContinuation<Outcome, Never>? = state.withLock { state in
            state.transcript.append(line)
            let waiting = state.waiters.sorted { $0.key < $1.key }
            for (id, waiter) in waiting where waiter.accepts?(line) == true {
                state.waiters[id] = nil
                return waiter.continuation
            }
            state.unread.append(line)
            return nil
        }
        taker?.resume(returning: .line(line))
    }

    /// Reaps the child, which has ended (its output is closed and `waitid` saw it exit), and ends every
    /// wait.
    func reap() {
        let (waiters, status): ([Waiter], Int32) = state.withLock { state in
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
            // WIFEXITED / WEXITSTATUS and WTERMSIG, which are macros in C.
            let status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            state.status = status
            let waiters = Array(state.waiters.values)
            state.waiters = [:]
            state.transcript.append("(exited with status \(status))")
            return (waiters, status)
        }
        for waiter in waiters { waiter.continuation.resume(returning: .ended(status)) }
    }

    // MARK: Used by the test

    /// Records a command sent to the process, for the transcript.
    func note(_ sent: String) {
        state.withLock { $0.transcript.append("> \(sent)") }
    }

    /// Sends `signal` to the child unless it was reaped already.
    ///
    /// - Returns: Whether the child was still there.
    @discardableResult
    func signal(_ signal: Int32) -> Bool {
        state.withLock { state in
            guard state.status == nil else { return false }
            return kill(pid, signal) == 0
        }
    }

    /// The exit status, once the process ended and was reaped.
    var status: Int32? {
        state.withLock { $0.status }
    }

    /// The last `count` lines of the transcript, one per line.
    func transcript(last count: Int = 60) -> String {
        state.withLock { $0.transcript.suffix(count).joined(separator: "\n") }
    }

    /// Every line printed so far, taken or not.
    var lines: [String] {
        state.withLock { $0.transcript.filter { !$0.hasPrefix("> ") } }
    }

    /// Waits for the first unread line `accepts` takes (or, with `nil`, for the process to end), at
    /// most `timeout`.
    func next(accepting accepts: (@Sendable (String) -> Bool)?, timeout: Duration) async -> Outcome {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        // A deadline, not a synchronisation: it only ends a wait that would otherwise hang the test.
        let timer = Task {
            try await Task.sleep(for: timeout)
            expire(id)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let now: Outcome? = state.withLock { state in
                    if let accepts, let index = state.unread.firstIndex(where: accepts) {
                        return .line(state.unread.remove(at: index))
                    }
                    if let status = state.status { return .ended(status) }
                    if state.expired.remove(id) != nil { return .timedOut }
                    state.waiters[id] = Waiter(accepts: accepts, continuation: continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            expire(id)
        }
    }

    /// Ends the wait `id` with ``Outcome/timedOut`` if it is still waiting.
    private func expire(_ id: Int) {
        let waiter = state.withLock { state in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.expired.insert(id)
                return Waiter?.none
            }
            return waiter
        }
        waiter?.continuation.resume(returning: .timedOut)
    }
}
