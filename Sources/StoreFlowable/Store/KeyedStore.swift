/// Stores for every key of a cache, built from the cache and a fetch function: no callback type to
/// write.
///
/// ```swift
/// let users = KeyedStore(cache: MemoryCache<Int, User>(policy: FreshnessPolicy(freshFor: .seconds(300)))) {
///     id in try await api.user(id)
/// }
/// let user = try await users[42].requireData()
/// ```
///
/// The cache's ``KeyedCache/policy`` decides what is served: a fresh value with no fetch; a value
/// inside the stale-while-revalidate window at once, while one background fetch refreshes it; the
/// cached value instead of a failing fetch's error inside the stale-if-error window; never a value past
/// `maxAge`. Values the fetch returns are stored with the cache's clock's time. Any ``KeyedCache``
/// works: ``MemoryCache``, a disk cache, a ``TieredCache``, or your own.
///
/// Every store of one `KeyedStore` (and of any other `KeyedStore` sharing its ``manager``) shares each
/// key's state, subscribers and single fetch, with every promise of `Docs/ConcurrencyGuarantees.md`.
/// A `KeyedStore` is a small `Sendable` value: keep one per kind of data and copy it freely.
public struct KeyedStore<Cache: KeyedCache>: Sendable {
    /// The type that identifies a value.
    public typealias Key = Cache.Key
    /// The type of the values.
    public typealias Value = Cache.Value

    /// The cache the stores read and write.
    public let cache: Cache
    /// The manager that tracks the state of each key.
    public let manager: FlowableDataStateManager<Key>
    @usableFromInline let fetch: @Sendable (Key) async throws -> Value

    /// Creates stores over `cache` that fetch missing and stale values with `fetch`.
    ///
    /// - Parameters:
    ///   - cache: The cache; its policy and clock decide freshness.
    ///   - manager: The manager tracking each key's state; a new one by default. Pass a shared one to
    ///     have two `KeyedStore`s of the same cache share each key's single fetch.
    ///   - fetch: Fetches the current value of a key from the origin. It runs at most once at a time
    ///     per key, in a task the store cancels when nobody waits for the result any more.
    public init(
        cache: Cache, manager: FlowableDataStateManager<Key> = FlowableDataStateManager(),
        fetch: @escaping @Sendable (Key) async throws -> Value
    ) {
        self.cache = cache
        self.manager = manager
        self.fetch = fetch
    }

    /// The store of `key`.
    ///
    /// Creating it allocates nothing: the store is a value built where it is used, and its cache-hit
    /// path is specialised for this cache type. Wrap it in ``AnyStoreFlowable`` to store it in a
    /// property of a non-generic type.
    ///
    /// - Parameter key: The key.
    /// - Returns: The store of the key's value.
    @inlinable
    public subscript(key: Key) -> some StoreFlowable<Value> {
        CallbackStore(callback: CacheCallback(key: key, cache: cache, manager: manager, fetch: fetch))
    }

    /// Invalidates every cached value, tracked or not: see ``invalidate(where:)``.
    ///
    /// - Throws: The first error of ``invalidate(where:)``.
    public func invalidateAll() async throws {
        try await invalidate(where: { _ in true })
    }

    /// Reads the cached value of `key` again and shows it to its subscribers, after the cache was
    /// changed by something other than this store's manager (another process sharing the cache); see
    /// ``StoreFlowable/reloadFromCache()``.
    ///
    /// - Parameter key: The key whose cached value changed.
    public func reloadFromCache(forKey key: Key) async {
        await CallbackStore(callback: CacheCallback(key: key, cache: cache, manager: manager, fetch: fetch))
            .reloadFromCache()
    }

    /// Reloads every key the manager tracks that satisfies `isIncluded` (see
    /// ``reloadFromCache(forKey:)``); keys nobody uses need no reload.
    ///
    /// - Parameter isIncluded: Chooses the keys; called outside every lock.
    public func reloadFromCache(where isIncluded: (Key) -> Bool) async {
        for key in await manager.trackedKeys(of: Value.self) where isIncluded(key) {
            await reloadFromCache(forKey: key)
        }
    }

    /// Marks the cached value of every key that satisfies `isIncluded` stale, without deleting it.
    ///
    /// The keys the manager tracks (with subscribers, callers waiting, or a fetch running) are
    /// invalidated as by ``StoreFlowable/invalidate()``: a fetch that began before the call is dropped
    /// and started again, subscribers get a refetch and keep their content. Every other entry is marked
    /// in the cache (``KeyedCache/invalidateEntries(where:)``), so its next read fetches. A fetch that
    /// starts while this call runs may count as starting after it and store a fresh value.
    ///
    /// - Parameter isIncluded: Chooses the keys; called outside every lock, possibly more than once per
    ///   key.
    /// - Throws: The first error the cache reported (every key is still attempted).
    public func invalidate(where isIncluded: @escaping @Sendable (Key) -> Bool) async throws {
        // Tracked keys are listed first, so that a fetch running now is among them and is dropped below
        // even if it finishes writing before the cache-wide mark.
        let tracked = await manager.trackedKeys(of: Value.self).filter(isIncluded)
        var firstError: (any Error)?
        do {
            try await cache.invalidateEntries(where: isIncluded)
        } catch {
            firstError = StoreFlowableError.cacheWriteFailed(underlying: error)
        }
        do {
            // Every key listed, tracked or not any more: one whose fetch finished meanwhile may have written
            // after the cache-wide mark.
            try await FlowableDataStateManager.invalidate(tracked) { self[$0] }
        } catch {
            if firstError == nil { firstError = error }
        }
        if let firstError { throw firstError }
    }
}
