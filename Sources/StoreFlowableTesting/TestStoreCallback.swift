public import StoreFlowable

/// A ready-made `StoreFlowableCallback` that reads and writes an ``InMemoryCache`` and fetches from a
/// ``ScriptedOrigin``.
///
/// ```swift
/// let cache = InMemoryCache<String>()
/// let origin = ScriptedOrigin<String>([.success("fresh")])
/// let callback = TestStoreCallback(
///     key: "user-1", manager: FlowableDataStateManager<String>(), cache: cache, origin: origin)
/// let store = callback.create()
/// #expect(try await store.requireData() == "fresh")
/// ```
///
/// Each operation forwards to one double and adds nothing: `loadDataFromCache()` is
/// ``InMemoryCache/load()``, `saveDataToCache(newData:)` is ``InMemoryCache/save(_:)``,
/// `fetchDataFromOrigin()` is ``ScriptedOrigin/fetch()``, and `needRefresh(cachedData:)` asks the
/// closure given to ``init(key:manager:cache:origin:needRefresh:)``.
public struct TestStoreCallback<Key: Hashable & Sendable, Value: Sendable>: StoreFlowableCallback {
    /// The type of the data the store serves.
    public typealias Data = Value

    /// The key this callback serves.
    public let key: Key

    /// The manager that tracks the state of the key.
    public let flowableDataStateManager: FlowableDataStateManager<Key>

    /// The cache the callback reads and writes.
    public let cache: InMemoryCache<Value>

    /// The origin the callback fetches from.
    public let origin: ScriptedOrigin<Value>

    /// Decides whether a cached value is stale.
    private let isStale: @Sendable (Value) -> Bool

    /// Creates a callback over `cache` and `origin`.
    ///
    /// - Parameters:
    ///   - key: The key the callback serves.
    ///   - manager: The state manager to share with every other callback of the same kind of data.
    ///   - cache: The cache to read and write.
    ///   - origin: The origin to fetch from.
    ///   - needRefresh: Returns `true` for a cached value that must be fetched again; by default every
    ///     cached value is valid.
    public init(
        key: Key,
        manager: FlowableDataStateManager<Key>,
        cache: InMemoryCache<Value>,
        origin: ScriptedOrigin<Value>,
        needRefresh: @escaping @Sendable (Value) -> Bool = { _ in false }
    ) {
        self.key = key
        flowableDataStateManager = manager
        self.cache = cache
        self.origin = origin
        isStale = needRefresh
    }

    /// Reads ``cache``.
    ///
    /// - Returns: The cached value, or `nil` when the cache is empty.
    /// - Throws: The failure set with ``InMemoryCache/failReads(with:)``.
    public func loadDataFromCache() async throws -> Value? {
        try await cache.load()
    }

    /// Writes ``cache``.
    ///
    /// - Parameter newData: The value to store, or `nil` to empty the cache.
    /// - Throws: The failure set with ``InMemoryCache/failWrites(with:)``.
    public func saveDataToCache(newData: Value?) async throws {
        try await cache.save(newData)
    }

    /// Fetches from ``origin``.
    ///
    /// - Returns: The next scripted value.
    /// - Throws: The next scripted error, or the errors listed at ``ScriptedOrigin/fetch()``.
    public func fetchDataFromOrigin() async throws -> Value {
        try await origin.fetch()
    }

    /// Asks the `needRefresh` closure given at creation.
    ///
    /// - Parameter cachedData: The value just read from the cache.
    /// - Returns: `true` when the value must be fetched again.
    public func needRefresh(cachedData: Value) async -> Bool {
        isStale(cachedData)
    }
}
