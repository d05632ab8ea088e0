#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value guarded by a `pthread_mutex_t`: the lock of the locked cache and of the counters below.
final class Locked<Value>: @unchecked Sendable {
    // Safety: `value` is only touched inside `withLock`, which holds the mutex for the whole access.
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

/// Counts arrivals for a round and wakes one waiter when all the expected arrivals of the round came.
///
/// Used the same way by a benchmark and its baseline, so its cost (a lock per arrival, one
/// continuation per round) is in both sides of a ratio.
final class Arrivals: Sendable {
    private struct State {
        var round = 0
        var expected = 0
        var count = 0
        var waiter: UnsafeContinuation<Void, Never>?
    }

    private let state = Locked(State())

    /// Starts round `round`, which is complete after `expected` arrivals tagged with it.
    func begin(round: Int, expecting expected: Int) {
        state.withLock { state in
            state.round = round
            state.expected = expected
            state.count = 0
        }
    }

    /// Records one arrival for `round`; arrivals for another round are ignored.
    func arrive(round: Int = 0) {
        let waiter: UnsafeContinuation<Void, Never>? = state.withLock { state in
            guard round == state.round else { return nil }
            state.count += 1
            guard state.count == state.expected else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns once every expected arrival of the current round came.
    func waitForAll() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.count >= state.expected { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// A gate that tasks wait at until it is opened; the baseline of the concurrent-readers benchmark and
/// the origin's gate in the store's benchmark.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [UnsafeContinuation<Void, Never>] = []
        var expected = Int.max
        var allWaiting: UnsafeContinuation<Void, Never>?
    }

    private let state: Locked<State>

    /// - Parameter expected: How many waiters ``waitUntilAllWait()`` waits for.
    init(expected: Int = .max) {
        var initial = State()
        initial.expected = expected
        if expected != .max { initial.waiters.reserveCapacity(expected) }
        state = Locked(initial)
    }

    /// Waits until the gate is open.
    func wait() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let (resumeNow, allWaiting): (Bool, UnsafeContinuation<Void, Never>?) = state.withLock { state in
                if state.isOpen { return (true, nil) }
                state.waiters.append(continuation)
                guard state.waiters.count == state.expected else { return (false, nil) }
                defer { state.allWaiting = nil }
                return (false, state.allWaiting)
            }
            if resumeNow { continuation.resume() }
            allWaiting?.resume()
        }
    }

    /// Returns once `expected` tasks wait at the gate.
    func waitUntilAllWait() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.waiters.count >= state.expected { return true }
                state.allWaiting = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Opens the gate: every waiter, present and future, goes on.
    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
