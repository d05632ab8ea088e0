/// A cache of values by key that stores can be built on: the memory, disk and tiered caches of this
/// library, or your own (a database table, Redis, a dictionary) through a conformance.
///
/// A cache stores ``CacheEntry`` values: the value, the time it was stored and an invalidation mark. It
/// decides nothing about freshness: its ``policy`` is read by the stores built on it
/// (``KeyedStore``), which compute freshness from the entry and ``clock``. A cache may drop entries
/// past the policy's ``FreshnessPolicy/lifetime`` (they can never be served), and may evict entries to
/// stay within its limits.
///
/// Every requirement may be called concurrently from any task. The requirements are `async throws` so
/// that slow caches (disk, a database) fit; fast caches implement them synchronously. A throwing read
/// counts as a miss in the stores; a throwing write is reported as
/// ``StoreFlowableError/cacheWriteFailed(underlying:)``.
public protocol KeyedCache<Key, Value>: Sendable {
    /// The type that identifies a value.
    associatedtype Key: Hashable & Sendable
    /// The type of the cached values.
    associatedtype Value: Sendable

    /// How long entries stay fresh and usable; stores built on this cache serve by it.
    var policy: FreshnessPolicy { get }

    /// The time source for timestamps and ages. Defaults to ``SystemCacheClock``.
    var clock: any CacheClock { get }

    /// Reads the entry of `key`.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, unchanged by the read (its timestamp and mark as stored), or `nil` when
    ///   nothing usable is cached.
    /// - Throws: Any error the storage reports; stores treat it as a miss.
    func entry(forKey key: Key) async throws -> CacheEntry<Value>?

    /// Stores `entry` under `key`, replacing any previous entry (its timestamp and mark included).
    ///
    /// - Parameters:
    ///   - entry: The entry to store.
    ///   - key: Its key.
    /// - Throws: Any error the storage reports.
    func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws

    /// Removes the entry of `key`, if any.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: Any error the storage reports.
    func removeEntry(forKey key: Key) async throws

    /// Marks the entry of `key`, if any, as invalidated, keeping its value and timestamp.
    ///
    /// - Parameter key: The key to invalidate.
    /// - Throws: Any error the storage reports.
    func invalidateEntry(forKey key: Key) async throws

    /// Marks every entry whose key satisfies `isIncluded` as invalidated.
    ///
    /// - Parameter isIncluded: Chooses the keys to invalidate. It may be called for every key, under
    ///   no lock of the cache.
    /// - Throws: Any error the storage reports.
    func invalidateEntries(where isIncluded: @escaping @Sendable (Key) -> Bool) async throws

    /// Removes every entry.
    ///
    /// - Throws: Any error the storage reports.
    func removeAllEntries() async throws
}

extension KeyedCache {
    /// The system's wall clock.
    public var clock: any CacheClock { SystemCacheClock() }

    /// Marks the entry of `key` as invalidated by reading it and writing it back marked.
    ///
    /// Caches that can mark an entry in place (or atomically) should implement this requirement
    /// themselves: this default may race with a concurrent write of the same key outside a store. Stores
    /// never race it with their own writes: they invalidate a key under its write turn.
    ///
    /// - Parameter key: The key to invalidate.
    /// - Throws: What ``entry(forKey:)`` or ``setEntry(_:forKey:)`` throws.
    public func invalidateEntry(forKey key: Key) async throws {
        guard let entry = try await entry(forKey: key), !entry.isInvalidated else { return }
        try await setEntry(entry.invalidated, forKey: key)
    }

    /// The freshness of `entry` now, by this cache's ``policy`` and ``clock``.
    ///
    /// - Parameter entry: An entry read from this cache.
    /// - Returns: Its freshness.
    public func freshness(of entry: CacheEntry<Value>) -> Freshness {
        policy.freshness(of: entry, now: clock.now)
    }
}
