#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Bionic)
    import Bionic
#else
    #error("StoreFlowable needs pthread mutexes on this platform.")
#endif

/// A `pthread_mutex_t` at a fixed heap address, owned by the one object whose state it guards.
///
/// A class that keeps its own guarded stored properties next to one of these needs a single extra
/// allocation for its lock (the mutex), instead of a separate ``LockedValue`` object plus its mutex.
/// It is non-copyable, so exactly one owner destroys the mutex, when the owner is deinitialised.
///
/// **The lock rule** (for this mutex and every lock built on it, in both products): code running inside
/// ``withLock(_:)`` only reads and writes the fields the mutex guards. It never takes the same lock
/// again (the mutex is not recursive), never yields into an `AsyncStream`, resumes a continuation,
/// creates, cancels or awaits a task, and never runs user code: each of those can take the runtime's
/// lock of some task, and a task being cancelled holds its own runtime lock while its cancellation and
/// termination handlers run, handlers that take these locks. Callers decide under the lock, return what
/// to resume, yield or cancel, and do it after unlocking. So nothing that runs in a cancellation or
/// termination handler ever waits for a lock held across such a call, and cancelling a consumer or a
/// caller at any moment cannot block another thread.
///
/// The library uses pthread mutexes rather than `Synchronization.Mutex` because ThreadSanitizer on
/// Linux cannot see the kernel hand-off inside a contended `Mutex` and would report false races; with a
/// pthread mutex every guarded access is visible to it.
package struct PthreadMutex: ~Copyable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates an unlocked mutex.
    package init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed with \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` while holding the mutex and returns what it returns.
    ///
    /// - Parameter body: Runs synchronously on the calling thread, with the mutex held.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; the mutex is released either way.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
