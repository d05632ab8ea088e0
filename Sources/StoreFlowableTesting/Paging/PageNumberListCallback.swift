public import StoreFlowable

/// A ready-made one-way paginated callback over a ``PageNumberListAPI``: the first page is page `0`,
/// each next page is the page number the previous one returned as its cursor.
///
/// ```swift
/// let api = PageNumberListAPI(items: Array(1...95), pageSize: 10)
/// let cache = InMemoryCache<PagedData<[Int], Int>>()
/// let callback = PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api, cache: cache)
/// let store = callback.create()
/// _ = try await store.requireData()   // page 0
/// await store.requestNextData()       // page 1
/// #expect(api.requestedPages == [0, 1])
/// ```
///
/// Each operation forwards to one double and adds nothing: `fetchDataFromOrigin()` is
/// ``PageNumberListAPI/firstPage()``, `fetchNextDataFromOrigin(nextCursor:data:)` is
/// ``PageNumberListAPI/page(_:)``, the cache operations are those of the ``InMemoryCache`` or
/// ``PersistentPagedCache`` given at creation, and pages are appended with the default merge. Give a
/// ``PersistentPagedCache`` to simulate a process restart: a new callback with a new manager over the
/// same cache resumes paging where the old one stopped.
public struct PageNumberListCallback<Key: Hashable & Sendable, Item: Sendable>: PaginationStoreFlowableCallback {
    /// The type of the loaded pages merged into one value: every item loaded so far, in page order.
    public typealias Data = [Item]

    /// The page number of the next page.
    public typealias Cursor = Int

    /// The key this callback serves.
    public let key: Key

    /// The manager that tracks the state of the key.
    public let flowableDataStateManager: FlowableDataStateManager<Key>

    /// The API the callback fetches pages from.
    public let api: PageNumberListAPI<Item>

    private let cache: any RecordCache<PagedData<[Item], Int>>
    private let isStale: @Sendable ([Item]) -> Bool

    /// Creates a callback over `api` that keeps its pages in `cache`.
    ///
    /// - Parameters:
    ///   - key: The key the callback serves.
    ///   - manager: The state manager to share with every other callback of the same kind of data.
    ///   - api: The API to fetch pages from.
    ///   - cache: The cache of the merged pages and their cursor: a new empty ``InMemoryCache`` by
    ///     default, or a ``PersistentPagedCache`` that outlives this callback and its manager like a
    ///     cache on disk.
    ///   - needRefresh: Returns `true` for cached items that must be fetched again from the first page;
    ///     by default cached items are always valid.
    public init(
        key: Key,
        manager: FlowableDataStateManager<Key>,
        api: PageNumberListAPI<Item>,
        cache: any RecordCache<PagedData<[Item], Int>> = InMemoryCache<PagedData<[Item], Int>>(),
        needRefresh: @escaping @Sendable ([Item]) -> Bool = { _ in false }
    ) {
        self.key = key
        flowableDataStateManager = manager
        self.api = api
        self.cache = cache
        isStale = needRefresh
    }

    /// Reads the cache given at creation.
    ///
    /// - Returns: The cached items and next page number, or `nil` when the cache is empty.
    /// - Throws: The cache's read failure, if one is set.
    public func loadDataFromCache() async throws -> PagedData<[Item], Int>? {
        try await cache.load()
    }

    /// Writes the cache given at creation.
    ///
    /// - Parameter newData: The items and next page number to store, or `nil` to empty the cache.
    /// - Throws: The cache's write failure, if one is set.
    public func saveDataToCache(newData: PagedData<[Item], Int>?) async throws {
        try await cache.save(newData)
    }

    /// Fetches page `0` from ``api``.
    ///
    /// - Returns: The first page, with the number of the next page.
    /// - Throws: The errors listed at ``PageNumberListAPI/firstPage()``.
    public func fetchDataFromOrigin() async throws -> PagedData<[Item], Int> {
        try await api.firstPage()
    }

    /// Fetches page `nextCursor` from ``api``.
    ///
    /// - Parameters:
    ///   - nextCursor: The number of the page to fetch.
    ///   - data: The cached items (unused).
    /// - Returns: The page, with the number of the page after it (`nil` for the last page).
    /// - Throws: The errors listed at ``PageNumberListAPI/page(_:)``.
    public func fetchNextDataFromOrigin(nextCursor: Int, data: [Item]) async throws -> FetchedPage<[Item], Int> {
        try await api.page(nextCursor)
    }

    /// Asks the `needRefresh` closure given at creation.
    ///
    /// - Parameter cachedData: The items just read from the cache.
    /// - Returns: `true` when the list must be fetched again from its first page.
    public func needRefresh(cachedData: [Item]) async -> Bool {
        isStale(cachedData)
    }
}
