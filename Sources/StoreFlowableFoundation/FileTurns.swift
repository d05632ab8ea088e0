import StoreFlowable

/// One turn at a time per file name: the writes, removals and invalidations of one entry file that
/// this process makes run one after the other, while other files' operations go on.
///
/// A turn is not a lock: a task waiting for one suspends (it never blocks a thread), and the mutex
/// inside is held only to update the queues, following the lock rule at `PthreadMutex`: continuations
/// are resumed after unlocking. Turns are shared by every ``DiskCache`` of the process on the same
/// folder path (see ``shared(forFolder:)``), so two instances over one folder do not race each other.
/// Waiting ignores cancellation: an operation on a file is short, and one that started finishes.
final class FileTurns: Sendable {
    /// For each file name with a turn taken: the tasks waiting for it, first come first served.
    private let queues = LockedValue<[String: [UnsafeContinuation<Void, Never>]]>([:])

    /// The turns of each folder path in use, held weakly.
    private static let registry = LockedValue<[String: WeakTurns]>([:])

    /// A weak reference to the turns of one folder.
    private struct WeakTurns: Sendable {
        weak var turns: FileTurns?
    }

    /// The turns every cache of this process on `folder` shares.
    ///
    /// - Parameter folder: The folder's path, as the cache spells it.
    /// - Returns: The folder's turns, created on first use and released with the last cache using it.
    static func shared(forFolder folder: String) -> FileTurns {
        registry.withLock { registry in
            if let turns = registry[folder]?.turns { return turns }
            // Drop the entries of released folders now and then, so the registry stays small.
            if registry.count >= 64 { registry = registry.filter { $0.value.turns != nil } }
            let turns = FileTurns()
            registry[folder] = WeakTurns(turns: turns)
            return turns
        }
    }

    /// Runs `body` during the turn of file `name`, after every earlier turn of it ended.
    ///
    /// - Parameters:
    ///   - name: The file's name.
    ///   - body: The file operation; it runs synchronously and must not wait for another turn.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; the turn ends either way.
    func withTurn<Result, Failure: Error>(
        _ name: String, _ body: () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        await acquire(name)
        defer { release(name) }
        return try body()
    }

    /// Waits until the turn of `name` is this task's.
    private func acquire(_ name: String) async {
        let granted = queues.withLock { queues in
            guard queues[name] == nil else { return false }
            queues[name] = []
            return true
        }
        if granted { return }
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let grantedNow = queues.withLock { queues in
                guard queues[name] != nil else {
                    queues[name] = []
                    return true
                }
                queues[name, default: []].append(continuation)
                return false
            }
            if grantedNow { continuation.resume() }
        }
    }

    /// Ends this task's turn of `name` and passes it to the next waiting task, if any.
    private func release(_ name: String) {
        let next = queues.withLock { queues -> UnsafeContinuation<Void, Never>? in
            guard var waiting = queues[name], !waiting.isEmpty else {
                queues[name] = nil
                return nil
            }
            let next = waiting.removeFirst()
            queues[name] = waiting
            return next
        }
        next?.resume()
    }
}
