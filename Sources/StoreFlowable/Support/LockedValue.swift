/// A value guarded by a `pthread_mutex_t`.
///
/// Shared with the StoreFlowableTesting doubles through `package` access. It follows the lock rule
/// written at ``PthreadMutex``: `body` only reads and writes the value; it never takes the same lock
/// again, yields into a stream, resumes a continuation, creates or cancels a task, or runs user code.
/// Callers return what to resume and do it after unlocking.
///
/// The library uses a pthread mutex rather than `Synchronization.Mutex` because ThreadSanitizer on
/// Linux cannot see the kernel hand-off inside a contended `Mutex` and would report false races; with a
/// pthread mutex every access below is visible to it.
package final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: `value` is only read or written inside `withLock`, which holds
    // `mutex` for the whole access, so no two threads ever touch it at once. The closures passed to
    // `withLock` are not `@Sendable`, but they run synchronously on the calling thread while the lock
    // is held and cannot be retained past the call.
    private var value: Value
    private let mutex = PthreadMutex()

    /// Creates the box holding `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { try body(&value) }
    }
}
