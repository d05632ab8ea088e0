public import StoreFlowable

/// A `KeyedCache` for tests: a dictionary of `CacheEntry` values that records every operation, and
/// can be told to fail or to hold reads and writes open.
///
/// Build stores and tiered caches on it, arrange it with ``entries``, the subscript or
/// ``insert(_:forKey:storedAt:isInvalidated:)`` (direct access, never recorded), and check
/// ``readCount``, ``writes(forKey:)``, ``operations`` and the other records afterwards. Inject a
/// `ManualCacheClock` to control the timestamps it hands out and the ages stores compute.
///
/// ```swift
/// let clock = ManualCacheClock()
/// let cache = TestKeyedCache<Int, String>(policy: FreshnessPolicy(freshFor: .seconds(60)), clock: clock)
/// cache.insert("cached", forKey: 1)           // stored now, by the clock
/// cache.failWrites(with: DiskFullError())     // every change now throws and changes nothing
/// cache.holdWrites()                          // every change now waits until releaseWrites()
/// ```
///
/// *Writes* are the five operations that change the cache: `setEntry(_:forKey:)`,
/// `removeEntry(forKey:)`, `invalidateEntry(forKey:)`, `invalidateEntries(where:)` and
/// `removeAllEntries()`. ``failWrites(with:)``, ``holdWrites()`` and ``writeAttemptCount`` apply to all
/// five; ``writeCount`` and ``writes(forKey:)`` count only `setEntry(_:forKey:)`.
///
/// Promises:
/// - Every method may be called from any task, concurrently.
/// - A read happens when it arrives: it counts, and returns the entry stored (or throws the read
///   failure set) at that moment; holding reads only delays its return.
/// - A write counts as an attempt when it arrives, then waits while writes are held, then fails if a
///   write failure is set at that moment, changing nothing and recording nothing else; otherwise it
///   takes effect and is recorded.
/// - Entries are stored and returned exactly as given: the cache never stamps, ages or drops them. The
///   ``policy`` and ``clock`` are only reported to the stores built on it (and
///   ``insert(_:forKey:storedAt:isInvalidated:)`` reads the clock).
/// - The waiting methods suspend without polling and return early when the calling task is
///   cancelled; held reads and writes ignore cancellation, like an operation that has reached the disk.
/// - No lock is held while a test's closure runs, a continuation is resumed, or a replaced entry or
///   error is released.
public final class TestKeyedCache<Key: Hashable & Sendable, Value: Sendable>: KeyedCache {
    /// One operation that took effect, as recorded in ``operations``.
    public enum Operation: Sendable {
        /// A successful `entry(forKey:)` of the key, whether it found an entry or not.
        case read(Key)
        /// A successful `setEntry(_:forKey:)`: the key and the entry written.
        case write(Key, CacheEntry<Value>)
        /// A successful `removeEntry(forKey:)` of the key, whether it held an entry or not.
        case remove(Key)
        /// A successful `invalidateEntry(forKey:)` of the key, whether it held an entry or not.
        case invalidate(Key)
        /// A successful `invalidateEntries(where:)`, with the keys whose entries it marked.
        case invalidateMatching(Set<Key>)
        /// A successful `removeAllEntries()`.
        case removeAll
    }

    /// What the cache has recorded since it was created or ``resetRecords()`` was last called.
    struct Records: Sendable {
        var reads: [Key] = []
        var writeAttempts = 0
        var writeCount = 0
        var writtenEntries: [Key: [CacheEntry<Value>]] = [:]
        var removedKeys: [Key] = []
        var invalidatedKeys: [Key] = []
        var predicateInvalidations = 0
        var removeAlls = 0
        var operations: [Operation] = []
    }

    /// The entries, records, failure switches and waiters, guarded by one lock.
    struct State: Sendable {
        var entries: [Key: CacheEntry<Value>]
        var records = Records()
        var readFailure: (any Error)?
        var writeFailure: (any Error)?
        var readsHeld = false
        var writesHeld = false
        var heldReads = WaiterList<Void, Void>()
        var heldWrites = WaiterList<Void, Void>()
        var readWaiters = WaiterList<Int, Void>()
        var writeAttemptWaiters = WaiterList<Int, Void>()
        var writeWaiters = WaiterList<Int, Void>()
    }

    /// Guards ``State``, following the rule at ``WaiterList``: held only to read and update it, never
    /// while resuming a continuation, calling a test's closure or touching a task; replaced entries and
    /// errors are released after unlocking. The cancellation handlers of the waiting methods take it.
    private let state: LockedValue<State>

    /// How long entries stay fresh, as reported to the stores built on this cache; the cache itself
    /// never applies it.
    public let policy: FreshnessPolicy

    /// The clock reported to the stores built on this cache, and read by
    /// ``insert(_:forKey:storedAt:isInvalidated:)``.
    public let clock: any CacheClock

    /// Creates a cache holding `entries`.
    ///
    /// - Parameters:
    ///   - entries: The initial entries; by default none.
    ///   - policy: The freshness policy to report; by default `FreshnessPolicy.forever`.
    ///   - clock: The clock to report; by default the system's wall clock. Pass a `ManualCacheClock` to
    ///     control time.
    public init(
        _ entries: [Key: CacheEntry<Value>] = [:], policy: FreshnessPolicy = .forever,
        clock: any CacheClock = SystemCacheClock()
    ) {
        state = LockedValue(State(entries: entries))
        self.policy = policy
        self.clock = clock
    }

    // MARK: Direct access

    /// Every entry by key, read or replaced directly; this access is not recorded, never fails and never
    /// waits.
    public var entries: [Key: CacheEntry<Value>] {
        get { state.withLock { $0.entries } }
        set { _ = state.replace(\.entries, with: newValue) }
    }

    /// The entry of `key`, read or replaced directly (`nil` removes it); this access is not recorded,
    /// never fails and never waits.
    ///
    /// - Parameter key: The key.
    public subscript(key: Key) -> CacheEntry<Value>? {
        get { state.withLock { $0.entries[key] } }
        set {
            _ = state.withLock { state in
                let replaced = state.entries[key]
                state.entries[key] = newValue
                return replaced  // released after unlocking
            }
        }
    }

    /// Stores `value` under `key` directly, replacing any entry; this access is not recorded, never
    /// fails and never waits.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: Its key.
    ///   - storedAt: Its timestamp; by default the ``clock``'s current time.
    ///   - isInvalidated: Whether the entry is already marked stale; by default `false`.
    public func insert(_ value: Value, forKey key: Key, storedAt: CacheTime? = nil, isInvalidated: Bool = false) {
        self[key] = CacheEntry(value: value, storedAt: storedAt ?? clock.now, isInvalidated: isInvalidated)
    }

    // MARK: KeyedCache

    /// Reads the entry of `key`, as stored.
    ///
    /// The read counts in ``readCount`` when it arrives, failing or not, and takes effect at once: it
    /// returns the entry stored at that moment, or throws the failure set at that moment. While reads
    /// are held (see ``holdReads()``), it then suspends until ``releaseReads()`` before returning,
    /// ignoring cancellation. A successful read is appended to ``operations``.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The stored entry, exactly as stored, or `nil` when there is none.
    /// - Throws: The error set with ``failReads(with:)``, if any.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        var result: Result<CacheEntry<Value>?, any Error> = .success(nil)
        var reached: [WaiterList<Int, Void>.Continuation] = []
        await state.park(
            in: \.heldReads, condition: (),
            arrive: { state in
                state.records.reads.append(key)
                if let failure = state.readFailure {
                    result = .failure(failure)
                } else {
                    result = .success(state.entries[key])
                    state.records.operations.append(.read(key))
                }
                reached = state.readWaiters.removeReached(state.records.reads.count)
                return state.readsHeld ? nil : ()
            },
            afterArriving: {
                for waiter in reached { waiter.resume() }
            })
        return try result.get()
    }

    /// Stores `entry` under `key` exactly as given, replacing any previous entry.
    ///
    /// A write (see the type's discussion): on success, the entry is appended to ``writes(forKey:)``
    /// and ``operations``, and counts in ``writeCount``.
    ///
    /// - Parameters:
    ///   - entry: The entry to store.
    ///   - key: Its key.
    /// - Throws: The error set with ``failWrites(with:)``, if any; nothing changes then.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws {
        await arriveAsWriter()
        let (replaced, reached) = try state.withLock { state in
            if let failure = state.writeFailure { throw failure }
            let replaced = state.entries.updateValue(entry, forKey: key)
            state.records.writtenEntries[key, default: []].append(entry)
            state.records.operations.append(.write(key, entry))
            state.records.writeCount += 1
            return (replaced, state.writeWaiters.removeReached(state.records.writeCount))
        }
        _ = replaced  // released here, after unlocking
        for waiter in reached { waiter.resume() }
    }

    /// Removes the entry of `key`, if any.
    ///
    /// A write (see the type's discussion): on success, `key` is appended to ``removedKeys`` and
    /// ``operations``.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: The error set with ``failWrites(with:)``, if any; nothing changes then.
    public func removeEntry(forKey key: Key) async throws {
        await arriveAsWriter()
        _ = try state.withLock { state in
            if let failure = state.writeFailure { throw failure }
            state.records.removedKeys.append(key)
            state.records.operations.append(.remove(key))
            return state.entries.removeValue(forKey: key)  // released after unlocking
        }
    }

    /// Marks the entry of `key`, if any, as invalidated, keeping its value and timestamp.
    ///
    /// A write (see the type's discussion): on success, `key` is appended to ``invalidatedKeys`` and
    /// ``operations``.
    ///
    /// - Parameter key: The key to invalidate.
    /// - Throws: The error set with ``failWrites(with:)``, if any; nothing changes then.
    public func invalidateEntry(forKey key: Key) async throws {
        await arriveAsWriter()
        try state.withLock { state in
            if let failure = state.writeFailure { throw failure }
            state.entries[key]?.isInvalidated = true
            state.records.invalidatedKeys.append(key)
            state.records.operations.append(.invalidate(key))
        }
    }

    /// Marks every entry whose key satisfies `isIncluded` as invalidated.
    ///
    /// A write (see the type's discussion). `isIncluded` is called once for each key stored when the
    /// write takes effect, with no lock held; the keys it chooses that still hold an entry afterwards are
    /// marked. On success, the call counts in ``predicateInvalidationCount`` and is appended to
    /// ``operations`` with the keys it marked.
    ///
    /// - Parameter isIncluded: Chooses the keys to invalidate.
    /// - Throws: The error set with ``failWrites(with:)``, if any; nothing changes then.
    public func invalidateEntries(where isIncluded: @escaping @Sendable (Key) -> Bool) async throws {
        await arriveAsWriter()
        let keys = try state.withLock { state in
            if let failure = state.writeFailure { throw failure }
            return Array(state.entries.keys)
        }
        let chosen = keys.filter(isIncluded)
        state.withLock { state in
            var marked = Set<Key>()
            for key in chosen where state.entries[key] != nil {
                state.entries[key]?.isInvalidated = true
                marked.insert(key)
            }
            state.records.predicateInvalidations += 1
            state.records.operations.append(.invalidateMatching(marked))
        }
    }

    /// Removes every entry.
    ///
    /// A write (see the type's discussion): on success, the call counts in ``removeAllCount`` and is
    /// appended to ``operations``.
    ///
    /// - Throws: The error set with ``failWrites(with:)``, if any; nothing changes then.
    public func removeAllEntries() async throws {
        await arriveAsWriter()
        _ = try state.withLock { state in
            if let failure = state.writeFailure { throw failure }
            state.records.removeAlls += 1
            state.records.operations.append(.removeAll)
            let removed = state.entries
            state.entries = [:]
            return removed  // released after unlocking
        }
    }

    /// Counts a write attempt, wakes the tasks waiting for it, and waits while writes are held.
    private func arriveAsWriter() async {
        var reached: [WaiterList<Int, Void>.Continuation] = []
        await state.park(
            in: \.heldWrites, condition: (),
            arrive: { state in
                state.records.writeAttempts += 1
                reached = state.writeAttemptWaiters.removeReached(state.records.writeAttempts)
                return state.writesHeld ? nil : ()
            },
            afterArriving: {
                for waiter in reached { waiter.resume() }
            })
    }

    // MARK: Records

    /// The number of calls to `entry(forKey:)`, including failing and held ones.
    public var readCount: Int {
        state.withLock { $0.records.reads.count }
    }

    /// The number of calls to `entry(forKey:)` for `key`, including failing and held ones.
    ///
    /// - Parameter key: The key.
    /// - Returns: The number of reads of `key`.
    public func readCount(forKey key: Key) -> Int {
        state.withLock { state in state.records.reads.lazy.filter { $0 == key }.count }
    }

    /// The keys of every call to `entry(forKey:)`, in the order they arrived, including failing and
    /// held ones.
    public var readKeys: [Key] {
        state.withLock { $0.records.reads }
    }

    /// The number of writes entered (all five changing operations), including held and failing ones.
    public var writeAttemptCount: Int {
        state.withLock { $0.records.writeAttempts }
    }

    /// The number of successful calls to `setEntry(_:forKey:)`.
    public var writeCount: Int {
        state.withLock { $0.records.writeCount }
    }

    /// The entries successful calls to `setEntry(_:forKey:)` wrote under `key`, in the order they took
    /// effect.
    ///
    /// - Parameter key: The key.
    /// - Returns: The written entries, oldest first; empty when none was written.
    public func writes(forKey key: Key) -> [CacheEntry<Value>] {
        state.withLock { $0.records.writtenEntries[key] ?? [] }
    }

    /// The entries successful calls to `setEntry(_:forKey:)` wrote, by key, each list in the order the
    /// writes took effect.
    public var writtenEntries: [Key: [CacheEntry<Value>]] {
        state.withLock { $0.records.writtenEntries }
    }

    /// The keys of the successful calls to `removeEntry(forKey:)`, in order, whether they held an entry
    /// or not.
    public var removedKeys: [Key] {
        state.withLock { $0.records.removedKeys }
    }

    /// The keys of the successful calls to `invalidateEntry(forKey:)`, in order, whether they held an
    /// entry or not.
    public var invalidatedKeys: [Key] {
        state.withLock { $0.records.invalidatedKeys }
    }

    /// The number of successful calls to `invalidateEntries(where:)`.
    public var predicateInvalidationCount: Int {
        state.withLock { $0.records.predicateInvalidations }
    }

    /// The number of successful calls to `removeAllEntries()`.
    public var removeAllCount: Int {
        state.withLock { $0.records.removeAlls }
    }

    /// Every operation that took effect, in that order: successful reads and writes. Failing calls and
    /// direct access are not listed.
    public var operations: [Operation] {
        state.withLock { $0.records.operations }
    }

    /// The number of reads waiting for ``releaseReads()`` right now.
    public var heldReadCount: Int {
        state.withLock { $0.heldReads.count }
    }

    /// The number of writes waiting for ``releaseWrites()`` right now.
    public var heldWriteCount: Int {
        state.withLock { $0.heldWrites.count }
    }

    /// Clears every record (counts, keys, written entries and ``operations``), keeping the entries,
    /// the failure switches, held operations and waiting tasks.
    ///
    /// Counts start again from zero: a task waiting for a count waits for the new count to reach it.
    public func resetRecords() {
        _ = state.replace(\.records, with: Records())
    }

    // MARK: Failure injection and holding

    /// Makes every following read throw `error`, or stops that with `nil`.
    ///
    /// - Parameter error: The error to throw, or `nil` to read normally again.
    public func failReads(with error: (any Error)?) {
        _ = state.replace(\.readFailure, with: error)
    }

    /// Makes every following write throw `error` without changing anything, or stops that with `nil`.
    ///
    /// A held write checks this when it is released, so you can hold a write, make writes fail, and
    /// release it to fail it.
    ///
    /// - Parameter error: The error to throw, or `nil` to write normally again.
    public func failWrites(with error: (any Error)?) {
        _ = state.replace(\.writeFailure, with: error)
    }

    /// Makes every read that arrives from now on wait until ``releaseReads()`` before returning what it
    /// read on arrival.
    public func holdReads() {
        state.withLock { $0.readsHeld = true }
    }

    /// Lets every held read return, in the order they arrived, and stops holding reads.
    public func releaseReads() {
        let held = state.withLock { state in
            state.readsHeld = false
            return state.heldReads.removeAll()
        }
        for read in held { read.resume() }
    }

    /// Makes every write that arrives from now on wait until ``releaseWrites()`` before it takes effect.
    public func holdWrites() {
        state.withLock { $0.writesHeld = true }
    }

    /// Lets every held write proceed, in the order they arrived, and stops holding writes.
    public func releaseWrites() {
        let held = state.withLock { state in
            state.writesHeld = false
            return state.heldWrites.removeAll()
        }
        for write in held { write.resume() }
    }

    // MARK: Waiting

    /// Suspends until `entry(forKey:)` has been called at least `count` times, counting failing and
    /// held calls.
    ///
    /// Returns at once when that is already true, and early when the calling task is cancelled. A read
    /// that arrived while reads were held is already waiting by the time this returns.
    ///
    /// - Parameter count: The number of reads to wait for.
    public func waitForReads(_ count: Int) async {
        await state.park(
            in: \.readWaiters, condition: count, ifCancelled: (),
            arrive: { $0.records.reads.count >= count ? () : nil })
    }

    /// Suspends until writes (any of the five changing operations) have been entered at least `count`
    /// times, counting held and failing ones.
    ///
    /// Returns at once when that is already true, and early when the calling task is cancelled. A write
    /// that arrived while writes were held is already waiting by the time this returns.
    ///
    /// - Parameter count: The number of write attempts to wait for.
    public func waitForWriteAttempts(_ count: Int) async {
        await state.park(
            in: \.writeAttemptWaiters, condition: count, ifCancelled: (),
            arrive: { $0.records.writeAttempts >= count ? () : nil })
    }

    /// Suspends until `setEntry(_:forKey:)` has succeeded at least `count` times (``writeCount``).
    ///
    /// Returns at once when that is already true, and early when the calling task is cancelled.
    ///
    /// - Parameter count: The number of successful writes to wait for.
    public func waitForWrites(_ count: Int) async {
        await state.park(
            in: \.writeWaiters, condition: count, ifCancelled: (),
            arrive: { $0.records.writeCount >= count ? () : nil })
    }
}

extension TestKeyedCache.Operation: Equatable where Value: Equatable {}
