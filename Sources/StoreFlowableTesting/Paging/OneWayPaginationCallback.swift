public import StoreFlowable

/// Any paginated callback seen as one-way: it forwards everything but the previous direction, so its
/// ``create()`` makes a one-way store even when `Base` also pages backwards.
///
/// ``TestPaginationCallback`` conforms to the two-way protocol, so its own `create()` makes a two-way
/// store; wrap it to test one-way paging with the same doubles:
///
/// ```swift
/// let store = OneWayPaginationCallback(callback).create()   // AnyPaginationStoreFlowable
/// ```
public struct OneWayPaginationCallback<Base: PaginationStoreFlowableCallback>: PaginationStoreFlowableCallback {
    /// The type that identifies one list.
    public typealias Key = Base.Key
    /// The type of the loaded pages merged into one value.
    public typealias Data = Base.Data
    /// The type that identifies a page to the origin.
    public typealias Cursor = Base.Cursor

    /// The callback every operation is forwarded to.
    public let base: Base

    /// Wraps `base`.
    ///
    /// - Parameter base: The callback to forward to.
    public init(_ base: Base) {
        self.base = base
    }

    /// The key of ``base``.
    public var key: Key { base.key }

    /// The manager of ``base``.
    public var flowableDataStateManager: FlowableDataStateManager<Key> { base.flowableDataStateManager }

    /// Reads the cache of ``base``.
    ///
    /// - Returns: The cached record, or `nil` when nothing is cached.
    /// - Throws: What ``base`` throws.
    public func loadDataFromCache() async throws -> PagedData<Data, Cursor>? {
        try await base.loadDataFromCache()
    }

    /// Writes the cache of ``base``.
    ///
    /// - Parameter newData: The record to store, or `nil` to delete it.
    /// - Throws: What ``base`` throws.
    public func saveDataToCache(newData: PagedData<Data, Cursor>?) async throws {
        try await base.saveDataToCache(newData: newData)
    }

    /// Fetches the first page from ``base``.
    ///
    /// - Returns: The first page and its cursors.
    /// - Throws: What ``base`` throws.
    public func fetchDataFromOrigin() async throws -> PagedData<Data, Cursor> {
        try await base.fetchDataFromOrigin()
    }

    /// Fetches the next page from ``base``.
    ///
    /// - Parameters:
    ///   - nextCursor: The cached next cursor.
    ///   - data: The cached data.
    /// - Returns: The page and the cursor after it.
    /// - Throws: What ``base`` throws.
    public func fetchNextDataFromOrigin(nextCursor: Cursor, data: Data) async throws -> FetchedPage<Data, Cursor> {
        try await base.fetchNextDataFromOrigin(nextCursor: nextCursor, data: data)
    }

    /// Merges a next page the way ``base`` does.
    ///
    /// - Parameters:
    ///   - page: The items of the page just fetched.
    ///   - cachedData: What the cache holds now.
    /// - Returns: The merged data.
    public func mergeNextPage(_ page: Data, into cachedData: Data) -> Data {
        base.mergeNextPage(page, into: cachedData)
    }

    /// Asks ``base`` whether the cached data is stale.
    ///
    /// - Parameter cachedData: The data just read from the cache.
    /// - Returns: What ``base`` answers.
    public func needRefresh(cachedData: Data) async -> Bool {
        await base.needRefresh(cachedData: cachedData)
    }
}
