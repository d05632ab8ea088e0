/// The callback of one key of a ``KeyedStore``: its cache operations go to a ``KeyedCache``, with
/// timestamps from the cache's clock and freshness from its policy; its fetch calls the store's closure.
@usableFromInline
struct CacheCallback<Cache: KeyedCache>: StoreFlowableCallback {
    @usableFromInline let key: Cache.Key
    @usableFromInline let cache: Cache
    @usableFromInline let manager: FlowableDataStateManager<Cache.Key>
    @usableFromInline let fetch: @Sendable (Cache.Key) async throws -> Cache.Value

    @usableFromInline
    init(
        key: Cache.Key, cache: Cache, manager: FlowableDataStateManager<Cache.Key>,
        fetch: @escaping @Sendable (Cache.Key) async throws -> Cache.Value
    ) {
        self.key = key
        self.cache = cache
        self.manager = manager
        self.fetch = fetch
    }

    @usableFromInline var flowableDataStateManager: FlowableDataStateManager<Cache.Key> { manager }

    @inlinable
    func loadCachedData() async throws -> CachedData<Cache.Value>? {
        guard let entry = try await cache.entry(forKey: key) else { return nil }
        return CachedData(value: entry.value, freshness: cache.freshness(of: entry), storedAt: entry.storedAt)
    }

    @inlinable
    func loadDataFromCache() async throws -> Cache.Value? {
        guard let read = try await loadCachedData(), read.freshness.isUsable else { return nil }
        return read.value
    }

    @usableFromInline
    func saveDataToCache(newData: Cache.Value?) async throws {
        if let newData {
            try await cache.setEntry(CacheEntry(value: newData, storedAt: cache.clock.now), forKey: key)
        } else {
            try await cache.removeEntry(forKey: key)
        }
    }

    @usableFromInline
    func fetchDataFromOrigin() async throws -> Cache.Value {
        try await fetch(key)
    }

    /// Reads the entry again: the value passed in carries no timestamp.
    @usableFromInline
    func needRefresh(cachedData: Cache.Value) async -> Bool {
        guard let read = try? await loadCachedData() else { return true }
        return read.freshness != .fresh
    }

    @usableFromInline
    func invalidateCache() async throws {
        try await cache.invalidateEntry(forKey: key)
    }
}

extension CacheCallback: ExpiringContentCallback {
    var contentExpiry: ContentExpiry? {
        cache.policy.maxAge.map { ContentExpiry(maxAge: $0, clock: cache.clock) }
    }
}
