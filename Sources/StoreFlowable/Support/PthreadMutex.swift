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
/// The mutex is not recursive: code running inside ``withLock(_:)`` must not take it again, and never
/// resumes a continuation or runs user code.
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
