#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Bionic)
    import Bionic
#else
    #error("StoreFlowableTesting needs pthread mutexes on this platform.")
#endif

/// The mutable state of one test double, guarded by a `pthread_mutex_t`.
///
/// The doubles use a pthread mutex rather than `Synchronization.Mutex` because ThreadSanitizer on
/// Linux cannot see the kernel hand-off inside a contended `Mutex` and reports false races; every
/// access through a pthread mutex is visible to it. The mutex is not recursive: code running inside
/// ``withLock(_:)`` must never call back into the double that owns the lock, and must never resume a
/// continuation (callers return the continuations and resume them after the lock is released).
final class LockedState<State: Sendable>: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: `state` is only read or written inside `withLock`, which holds
    // `mutex` for the whole access, so no two threads ever touch it at once. `State` is `Sendable`, so
    // whatever `withLock` hands out may cross threads. The closures passed to `withLock` are not
    // `@Sendable`, but they run synchronously on the calling thread while the lock is held and cannot
    // be retained past the call.
    private var state: State
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates the box holding `state`.
    init(_ state: State) {
        self.state = state
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

    /// Runs `body` with exclusive access to the state and returns what it returns.
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
