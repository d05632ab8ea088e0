/// A thread-safe in-memory ``KeyedCache``: values by key, with optional count and cost limits enforced by
/// evicting the least recently used entries, and a time to live taken from a ``FreshnessPolicy``.
///
/// ```swift
/// let users = MemoryCache<Int, String>(countLimit: 1_000, policy: FreshnessPolicy(freshFor: .seconds(60)))
/// users[42] = "Ada"                                   // stored now, cost 0
/// users.setValue("Grace", forKey: 7, cost: 2)         // counted in totalCost
/// let name = users[42]                                // a hit: 42 becomes the most recently used
/// ```
///
/// **Recency.** Every store and every read that hits makes an entry the most recently used. When a write
/// would break a limit, the least recently used entries are evicted until the new entry fits. The new
/// entry itself is never evicted to make room for itself (with zero costs, say): the others go first.
///
/// **Oversize entries.** An entry whose cost alone exceeds `costLimit` (or any entry when `countLimit` is
/// 0) is not stored, and the key's previous entry is removed, so reading the key gives `nil` rather than
/// a value older than the last write. No other entry is evicted for it.
///
/// **Time to live.** An entry is kept until it is past the ``policy``'s ``FreshnessPolicy/lifetime``:
/// a read that finds it past that age (by ``clock``) removes it and reports a miss. Expired entries
/// nobody reads stay until evicted, replaced or removed, and count in ``count`` and ``totalCost``
/// meanwhile. A read never changes an entry's timestamp or mark, so reading cannot make a value younger.
/// Everything else about freshness (stale windows, invalidation) is for the stores built on the cache.
///
/// **Concurrency.** Every method may be called from any thread or task, concurrently; each is atomic
/// and O(1) (amortised) except ``invalidateEntries(where:)`` and ``removeAllEntries()``, which are O(n).
/// The methods are synchronous and never throw; they also satisfy the `async throws` requirements of
/// ``KeyedCache``. The cache holds a pthread mutex only to update its storage: no user code runs under
/// it. Values and keys the cache lets go of (replaced, evicted, expired or removed) are released after
/// unlocking, so their `deinit` may call the cache again; ``clock`` is read before locking; the predicate
/// of ``invalidateEntries(where:)`` runs under no lock. The one exception is the key type's `hash(into:)`
/// and `==`, which the dictionary inside calls under the lock: they must not call the cache.
///
/// Memory: one slot per entry in two contiguous arrays (no allocation per entry) plus a dictionary
/// index. The arrays keep their largest size until ``removeAllEntries()``; slots freed by removals are
/// reused.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: KeyedCache, @unchecked Sendable {
    // Safety of `@unchecked Sendable`: the only mutable state is `storage`, which is read and written only
    // inside `mutex.withLock`, so no two threads touch it at once; it holds only `Key` and `Value`, both
    // `Sendable`, so handing entries to other threads is safe. Every other stored property is a `let` of a
    // `Sendable` type (`policy`, `clock`, the limits) or the mutex itself, which is built for sharing.
    // The closures passed to `withLock` are not `@Sendable`, but run synchronously on the calling thread.

    /// How long entries stay fresh and usable: stores built on the cache serve by it, and the cache drops
    /// an entry that a read finds past its ``FreshnessPolicy/lifetime``.
    public let policy: FreshnessPolicy

    /// The time source: writes stamp entries with its ``CacheClock/now`` and reads measure ages with it.
    public let clock: any CacheClock

    /// The most entries the cache keeps; `nil` for no limit.
    public let countLimit: Int?

    /// The highest total cost the cache keeps; `nil` for no limit (the total then stays within
    /// `Int.max`, evicting as it would at that limit).
    public let costLimit: Int?

    /// Whether the policy ever expires an entry; if not, reads need not ask the clock.
    @usableFromInline let expiresEntries: Bool
    /// The entries, guarded by `mutex`.
    private var storage: LRUStorage<Key, Value>
    /// Guards `storage`, following the lock rule written at ``PthreadMutex``.
    private let mutex = PthreadMutex()

    /// Runs `body` on the storage under the lock: how the `@inlinable` reads and writes reach it.
    ///
    /// Those methods are inlinable so that calls with concrete types are specialised in the caller's
    /// module (see ``LRUStorage``); this function is not, as the storage and its lock are not visible
    /// outside the module. `body` follows the lock rule: it only calls the storage and returns what the
    /// storage hands back, to be released by the caller after this function returns.
    ///
    /// - Parameter body: Runs synchronously with the lock held.
    /// - Returns: What `body` returns.
    @usableFromInline
    func withStorage<Result>(_ body: (inout LRUStorage<Key, Value>) -> Result) -> Result {
        mutex.withLock { body(&storage) }
    }

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - countLimit: The most entries kept, at least 0; `nil` (the default) for no limit.
    ///   - costLimit: The highest total cost of the entries kept, at least 0; `nil` (the default) for no
    ///     limit. Costs are given with each write: see ``setValue(_:forKey:cost:)``.
    ///   - policy: How long entries stay fresh and usable; entries past its lifetime are dropped on read.
    ///     By default, entries never expire.
    ///   - clock: The time source for timestamps and ages; by default the system's wall clock.
    /// - Precondition: Neither limit is negative.
    public init(
        countLimit: Int? = nil, costLimit: Int? = nil, policy: FreshnessPolicy = .forever,
        clock: any CacheClock = SystemCacheClock()
    ) {
        self.policy = policy
        self.clock = clock
        self.countLimit = countLimit
        self.costLimit = costLimit
        expiresEntries = policy.lifetime != nil
        storage = LRUStorage(countLimit: countLimit, costLimit: costLimit, policy: policy)
    }

    // MARK: Values

    /// The value of `key`: reading is ``value(forKey:)``; writing a value is
    /// ``setValue(_:forKey:cost:)`` with cost 0, writing `nil` is ``removeEntry(forKey:)``.
    ///
    /// - Parameter key: The key.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue { setValue(newValue, forKey: key) } else { removeEntry(forKey: key) }
        }
    }

    /// Reads the value of `key`, counting as a use of the entry.
    ///
    /// An entry past the policy's lifetime is removed and reads as `nil`. An invalidated entry is
    /// returned like any other: use ``entry(forKey:)`` to see the mark.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` when the key has no entry or its entry expired.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        entry(forKey: key)?.value
    }

    /// Stores `value` under `key`, stamped with the clock's current time, replacing any previous entry
    /// of the key (and its invalidation mark).
    ///
    /// The entry becomes the most recently used; least recently used entries are then evicted until the
    /// limits hold. An entry whose cost alone exceeds ``costLimit`` is not stored, and the key's previous
    /// entry is removed.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: Its key.
    ///   - cost: What the entry counts towards ``costLimit`` (bytes, say); a negative cost counts as 0.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost: Int = 0) {
        setEntry(CacheEntry(value: value, storedAt: clock.now), forKey: key, cost: cost)
    }

    /// Removes the entry of `key` and returns its value.
    ///
    /// - Parameter key: The key to remove.
    /// - Returns: The removed value, or `nil` when the key had no entry (an expired entry is returned
    ///   too: it was still stored).
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        let removed = mutex.withLock { storage.removeEntry(forKey: key) }
        return removed?.entry.value
    }

    // MARK: Entries

    /// Reads the entry of `key`, counting as a use of it.
    ///
    /// The entry is returned exactly as stored: the read changes neither its timestamp nor its mark. An
    /// entry past the policy's lifetime at the clock's current time is removed instead, and the read is
    /// a miss.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, or `nil` when the key has no entry or its entry expired.
    @inlinable
    public func entry(forKey key: Key) -> CacheEntry<Value>? {
        // The clock is read before locking: a custom clock is user code. With no lifetime, no entry can
        // expire, and the clock is not read at all.
        let now = expiresEntries ? clock.now : nil
        let lookup = withStorage { $0.entry(forKey: key, now: now) }
        // An expired entry is released here, after unlocking, with `lookup`.
        guard case .hit(let entry) = lookup else { return nil }
        return entry
    }

    /// Stores `entry` under `key` with cost 0, keeping its timestamp and mark as given.
    ///
    /// A tiered cache copies an entry from a slower tier with this, so the copy keeps its age. Otherwise
    /// the same as ``setEntry(_:forKey:cost:)``.
    ///
    /// - Parameters:
    ///   - entry: The entry to store.
    ///   - key: Its key.
    @inlinable
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) {
        setEntry(entry, forKey: key, cost: 0)
    }

    /// Stores `entry` under `key`, keeping its timestamp and mark as given, and replacing any previous
    /// entry of the key.
    ///
    /// The entry becomes the most recently used; least recently used entries are then evicted until the
    /// limits hold, never the new entry. An entry whose cost alone exceeds ``costLimit`` (or any entry
    /// when ``countLimit`` is 0) is not stored, and the key's previous entry is removed; no other entry
    /// is evicted for it. An entry already past the policy's lifetime is stored, and dropped on its
    /// first read.
    ///
    /// - Parameters:
    ///   - entry: The entry to store.
    ///   - key: Its key.
    ///   - cost: What the entry counts towards ``costLimit``; a negative cost counts as 0.
    @inlinable
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, cost: Int) {
        let removed = withStorage { $0.setEntry(entry, forKey: key, cost: cost) }
        // The replaced and evicted entries are released here, after unlocking.
        withExtendedLifetime(removed) {}
    }

    /// Removes the entry of `key`, if any; its value is released after unlocking.
    ///
    /// - Parameter key: The key to remove.
    public func removeEntry(forKey key: Key) {
        removeValue(forKey: key)
    }

    /// Marks the entry of `key`, if any, as invalidated, in place and atomically: its value, timestamp,
    /// cost and recency are kept, and the next write of the key replaces the mark.
    ///
    /// Stores built on the cache fetch before serving an invalidated entry (see ``FreshnessPolicy``).
    ///
    /// - Parameter key: The key to invalidate.
    public func invalidateEntry(forKey key: Key) {
        _ = mutex.withLock { storage.invalidateEntry(forKey: key) }
    }

    /// Marks every entry whose key satisfies `isIncluded` as invalidated, in place.
    ///
    /// The cache lists its keys under its lock, calls `isIncluded` for each under no lock (it may call
    /// the cache), then marks the chosen entries under the lock. An entry written for a chosen key while
    /// `isIncluded` ran is newer than the invalidation and is left unmarked; an entry removed meanwhile
    /// stays removed; a key first stored meanwhile is not considered.
    ///
    /// - Parameter isIncluded: Chooses the keys to invalidate; called once per stored key.
    public func invalidateEntries(where isIncluded: @escaping @Sendable (Key) -> Bool) {
        let stored = mutex.withLock { storage.snapshot() }
        let chosen = stored.filter { isIncluded($0.key) }
        guard !chosen.isEmpty else { return }
        _ = mutex.withLock { storage.invalidate(chosen) }
        // The listed keys are released here, after unlocking.
    }

    /// Removes every entry; their values are released after unlocking.
    public func removeAllEntries() {
        let removed = mutex.withLock {
            let removed = storage
            storage = LRUStorage(countLimit: countLimit, costLimit: costLimit, policy: policy)
            return removed
        }
        withExtendedLifetime(removed) {}
    }

    /// Removes every entry, like ``removeAllEntries()``; named like `Dictionary.removeAll()`.
    public func removeAll() {
        removeAllEntries()
    }

    // MARK: Size

    /// The number of entries stored, including expired entries no read has dropped yet.
    public var count: Int {
        mutex.withLock { storage.count }
    }

    /// The sum of the stored entries' costs, including those of expired entries no read has dropped yet.
    public var totalCost: Int {
        mutex.withLock { storage.totalCost }
    }

    // MARK: Testing

    /// A copy of the storage, taken under the lock, for tests to inspect (recency order, invariants).
    var storageSnapshot: LRUStorage<Key, Value> {
        mutex.withLock { storage }
    }
}
