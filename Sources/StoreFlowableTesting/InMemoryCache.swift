import StoreFlowable

/// A cache for tests that keeps one value in memory, records every read and write, and can be told
/// to fail or to hold writes open.
///
/// Call ``load()`` and ``save(_:)`` from your callback's `loadDataFromCache()` and
/// `saveDataToCache(newData:)` (``TestStoreCallback`` does this for you). Set ``value`` to arrange a
/// cache before a test and read it, ``writes`` or ``readCount`` afterwards.
///
/// ```swift
/// let cache = InMemoryCache<String>("cached")
/// cache.failWrites(with: DiskFullError())   // the next saves throw and leave the value alone
/// cache.holdWrites()                        // saves now wait until releaseWrites()
/// ```
///
/// Promises:
/// - Every method may be called from any task, concurrently.
/// - A failed write leaves ``value`` unchanged and is not appended to ``writes``.
/// - The waiting methods suspend without polling; ``waitForWriteAttempts(_:)`` and
///   ``waitForReads(_:)`` return early when the calling task is cancelled, while a held ``save(_:)``
///   ignores cancellation, like a write that has reached the disk.
public final class InMemoryCache<Value: Sendable>: RecordCache {
    /// The value, records, failure switches and waiters, guarded by one lock.
    struct State: Sendable {
        var value: Value?
        var reads = 0
        var writeAttempts = 0
        var writes: [Value?] = []
        var readFailure: (any Error)?
        var writeFailure: (any Error)?
        var writesHeld = false
        var heldWrites = WaiterList<Void, Void>()
        var readWaiters = WaiterList<Int, Void>()
        var writeAttemptWaiters = WaiterList<Int, Void>()
    }

    /// Guards ``State``, following the rule at ``WaiterList``: held only to read and update it, never
    /// while resuming a continuation or touching a task, and a replaced value or error is released
    /// after unlocking; the cancellation handlers of the waiting methods take it.
    private let state: LockedValue<State>

    /// Creates a cache holding `initial`.
    ///
    /// - Parameter initial: The cached value, or `nil` for an empty cache.
    public init(_ initial: Value? = nil) {
        state = LockedValue(State(value: initial))
    }

    /// The cached value, read or written directly; this access is not recorded and never fails.
    public var value: Value? {
        get { state.withLock { $0.value } }
        set { _ = state.replace(\.value, with: newValue) }
    }

    // MARK: Cache operations

    /// Reads the cached value, as a callback's `loadDataFromCache()` does.
    ///
    /// Every call counts in ``readCount``, including failing ones.
    ///
    /// - Returns: The cached value, or `nil` when the cache is empty.
    /// - Throws: The error set with ``failReads(with:)``, if any.
    public func load() async throws -> Value? {
        let (result, reached) = state.withLock { state in
            state.reads += 1
            let result: Result<Value?, any Error> = state.readFailure.map { .failure($0) } ?? .success(state.value)
            return (result, state.readWaiters.removeReached(state.reads))
        }
        for waiter in reached { waiter.resume() }
        return try result.get()
    }

    /// Writes the cached value, as a callback's `saveDataToCache(newData:)` does.
    ///
    /// Every call counts as a write attempt for ``waitForWriteAttempts(_:)``. While writes are held
    /// (see ``holdWrites()``), the call then suspends until ``releaseWrites()``, ignoring cancellation.
    /// Finally it fails if a failure is set at that moment (see ``failWrites(with:)``); otherwise it
    /// replaces ``value`` and appends `newValue` to ``writes``.
    ///
    /// - Parameter newValue: The value to store, or `nil` to empty the cache.
    /// - Throws: The error set with ``failWrites(with:)``, if any; ``value`` is unchanged then.
    public func save(_ newValue: Value?) async throws {
        var reached: [WaiterList<Int, Void>.Continuation] = []
        await state.park(
            in: \.heldWrites, condition: (),
            arrive: { state in
                state.writeAttempts += 1
                reached = state.writeAttemptWaiters.removeReached(state.writeAttempts)
                return state.writesHeld ? nil : ()
            },
            afterArriving: {
                for waiter in reached { waiter.resume() }
            })
        _ = try state.withLock { state in
            if let failure = state.writeFailure { throw failure }
            state.writes.append(newValue)
            let replaced = state.value
            state.value = newValue
            return replaced  // released after unlocking
        }
    }

    // MARK: Records

    /// The number of times ``load()`` has been called, including failing calls.
    public var readCount: Int {
        state.withLock { $0.reads }
    }

    /// The number of successful calls to ``save(_:)``.
    public var writeCount: Int {
        state.withLock { $0.writes.count }
    }

    /// The number of times ``save(_:)`` has been entered, including held and failing calls.
    public var writeAttemptCount: Int {
        state.withLock { $0.writeAttempts }
    }

    /// The values of the successful calls to ``save(_:)``, in the order they completed; `nil` marks
    /// a deletion.
    public var writes: [Value?] {
        state.withLock { $0.writes }
    }

    /// The number of calls to ``save(_:)`` waiting for ``releaseWrites()`` right now.
    public var heldWriteCount: Int {
        state.withLock { $0.heldWrites.count }
    }

    // MARK: Failure injection and holding

    /// Makes every following ``load()`` throw `error`, or stops that with `nil`.
    ///
    /// - Parameter error: The error to throw, or `nil` to read normally again.
    public func failReads(with error: (any Error)?) {
        _ = state.replace(\.readFailure, with: error)
    }

    /// Makes every following ``save(_:)`` throw `error` without changing the value, or stops that with
    /// `nil`.
    ///
    /// A held write checks this when it is released, so you can hold a write, make writes fail, and
    /// release it to fail it.
    ///
    /// - Parameter error: The error to throw, or `nil` to write normally again.
    public func failWrites(with error: (any Error)?) {
        _ = state.replace(\.writeFailure, with: error)
    }

    /// Makes every call to ``save(_:)`` that arrives from now on wait until ``releaseWrites()``.
    public func holdWrites() {
        state.withLock { $0.writesHeld = true }
    }

    /// Lets every held call to ``save(_:)`` complete, in the order they arrived, and stops holding
    /// writes.
    public func releaseWrites() {
        let held = state.withLock { state in
            state.writesHeld = false
            return state.heldWrites.removeAll()
        }
        for write in held { write.resume() }
    }

    // MARK: Waiting

    /// Suspends until ``save(_:)`` has been entered at least `count` times, counting held and failing
    /// calls.
    ///
    /// Returns at once when that is already true, and early when the calling task is cancelled. A
    /// write that arrived while writes were held is already waiting by the time this returns.
    ///
    /// - Parameter count: The number of write attempts to wait for.
    public func waitForWriteAttempts(_ count: Int) async {
        await state.park(
            in: \.writeAttemptWaiters, condition: count, ifCancelled: (),
            arrive: { $0.writeAttempts >= count ? () : nil })
    }

    /// Suspends until ``load()`` has been called at least `count` times, counting failing calls.
    ///
    /// Returns at once when that is already true, and early when the calling task is cancelled.
    ///
    /// - Parameter count: The number of reads to wait for.
    public func waitForReads(_ count: Int) async {
        await state.park(
            in: \.readWaiters, condition: count, ifCancelled: (),
            arrive: { $0.reads >= count ? () : nil })
    }
}
