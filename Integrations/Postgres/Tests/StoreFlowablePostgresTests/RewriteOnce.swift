import Dispatch
import StoreFlowable
import StoreFlowablePostgres

/// Writes one entry from another task, once, while a synchronous caller (a predicate of
/// `invalidateEntries(where:)`) waits for it: a way to change a row in the middle of a call that takes
/// no `async` callback.
///
/// The state is kept in semaphores (which are `Sendable`), so no lock is needed: `gate` lets the first
/// caller through, `finished` and `success` count the write's end and its success.
final class RewriteOnce: Sendable {
    private let cache: PostgresCache<Int, String>
    private let key: Int
    private let entry: CacheEntry<String>
    // Created at 0 and signalled once in `init`: libdispatch traps when a semaphore is freed with a
    // value below the one it was created with, and the first caller takes this one for good.
    private let gate = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let success = DispatchSemaphore(value: 0)

    init(cache: PostgresCache<Int, String>, key: Int, entry: CacheEntry<String>) {
        self.cache = cache
        self.key = key
        self.entry = entry
        gate.signal()
    }

    /// On the first call, writes the entry from a new task and blocks until it is written (20 seconds at
    /// most); later calls return at once.
    func runBlocking() {
        guard gate.wait(timeout: .now()) == .success else { return }
        Task { [cache, key, entry, finished, success] in
            if (try? await cache.setEntry(entry, forKey: key)) != nil { success.signal() }
            finished.signal()
        }
        _ = finished.wait(timeout: .now() + 20)
    }

    /// Whether the write succeeded (within the wait).
    var succeeded: Bool {
        guard success.wait(timeout: .now()) == .success else { return false }
        success.signal()
        return true
    }
}
