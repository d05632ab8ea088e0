public import StoreFlowable

/// A ready-made two-way paginated callback over a ``CursorListAPI``, shaped like a chat history: the
/// first load is the newest page, the previous direction loads older messages and the next direction
/// newer ones.
///
/// ```swift
/// let api = CursorListAPI(items: Array(1...25), pageSize: 10)
/// let callback = ChatHistoryCallback(key: "room", manager: FlowableDataStateManager(), api: api)
/// let store = callback.create()
/// _ = try await store.requireData()   // messages 16...25
/// await store.requestPrevData()       // messages 6...25
/// api.append(contentsOf: [26])        // a new message arrives
/// await store.requestNextData()       // messages 6...26
/// ```
///
/// Each operation forwards to one double and adds nothing: `fetchDataFromOrigin()` is
/// ``CursorListAPI/latestPage()``, `fetchPrevDataFromOrigin(prevCursor:data:)` is
/// ``CursorListAPI/olderPage(before:)``, `fetchNextDataFromOrigin(nextCursor:data:)` is
/// ``CursorListAPI/newerPage(after:)``, and the cache operations are those of the ``InMemoryCache`` or
/// ``PersistentPagedCache`` given at creation. Pages are merged with the default merges, so the cached
/// messages stay oldest first: older pages are prepended, newer ones appended. Give a
/// ``PersistentPagedCache`` to simulate a process restart: a new callback with a new manager over the
/// same cache resumes paging in both directions with the persisted cursors.
public struct ChatHistoryCallback<Key: Hashable & Sendable, Item: Sendable>: TwoWayPaginationStoreFlowableCallback {
    /// The type of the loaded pages merged into one value: every message loaded so far, oldest first.
    public typealias Data = [Item]

    /// The opaque cursor of the API.
    public typealias Cursor = ListCursor

    /// The key this callback serves.
    public let key: Key

    /// The manager that tracks the state of the key.
    public let flowableDataStateManager: FlowableDataStateManager<Key>

    /// The API the callback fetches pages from.
    public let api: CursorListAPI<Item>

    private let cache: any RecordCache<PagedData<[Item], ListCursor>>
    private let isStale: @Sendable ([Item]) -> Bool

    /// Creates a callback over `api` that keeps its messages in `cache`.
    ///
    /// - Parameters:
    ///   - key: The key the callback serves, such as a room id.
    ///   - manager: The state manager to share with every other callback of the same kind of data.
    ///   - api: The API to fetch pages from.
    ///   - cache: The cache of the merged messages and their cursors: a new empty ``InMemoryCache`` by
    ///     default, or a ``PersistentPagedCache`` that outlives this callback and its manager like a
    ///     cache on disk.
    ///   - needRefresh: Returns `true` for cached messages that must be fetched again from the newest
    ///     page; by default cached messages are always valid.
    public init(
        key: Key,
        manager: FlowableDataStateManager<Key>,
        api: CursorListAPI<Item>,
        cache: any RecordCache<PagedData<[Item], ListCursor>> = InMemoryCache<PagedData<[Item], ListCursor>>(),
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
    /// - Returns: The cached messages and cursors, or `nil` when the cache is empty.
    /// - Throws: The cache's read failure, if one is set.
    public func loadDataFromCache() async throws -> PagedData<[Item], ListCursor>? {
        try await cache.load()
    }

    /// Writes the cache given at creation.
    ///
    /// - Parameter newData: The messages and cursors to store, or `nil` to empty the cache.
    /// - Throws: The cache's write failure, if one is set.
    public func saveDataToCache(newData: PagedData<[Item], ListCursor>?) async throws {
        try await cache.save(newData)
    }

    /// Fetches the newest page from ``api``.
    ///
    /// - Returns: The newest messages, with the cursors of older and newer messages.
    /// - Throws: The errors listed at ``CursorListAPI/latestPage()``.
    public func fetchDataFromOrigin() async throws -> PagedData<[Item], ListCursor> {
        try await api.latestPage()
    }

    /// Fetches the messages just newer than the cached ones from ``api``.
    ///
    /// - Parameters:
    ///   - nextCursor: The cached next cursor.
    ///   - data: The cached messages (unused).
    /// - Returns: The newer messages, possibly none, with the cursor of the messages after them.
    /// - Throws: The errors listed at ``CursorListAPI/newerPage(after:)``.
    public func fetchNextDataFromOrigin(nextCursor: ListCursor, data: [Item]) async throws
        -> FetchedPage<[Item], ListCursor>
    {
        try await api.newerPage(after: nextCursor)
    }

    /// Fetches the messages just older than the cached ones from ``api``.
    ///
    /// - Parameters:
    ///   - prevCursor: The cached previous cursor.
    ///   - data: The cached messages (unused).
    /// - Returns: The older messages, with the cursor of the messages before them (`nil` at the oldest).
    /// - Throws: The errors listed at ``CursorListAPI/olderPage(before:)``.
    public func fetchPrevDataFromOrigin(prevCursor: ListCursor, data: [Item]) async throws
        -> FetchedPage<[Item], ListCursor>
    {
        try await api.olderPage(before: prevCursor)
    }

    /// Asks the `needRefresh` closure given at creation.
    ///
    /// - Parameter cachedData: The messages just read from the cache.
    /// - Returns: `true` when the history must be fetched again from the newest page.
    public func needRefresh(cachedData: [Item]) async -> Bool {
        isStale(cachedData)
    }
}
