/// The operations you implement so a store can serve a list that grows by pages in one direction: read
/// and write the cached pages with their cursor, fetch the first page and the next ones, merge a page
/// into the cached data, and decide when the cached data is stale.
///
/// Create a store with ``create()``. Everything ``StoreFlowableCallback`` promises about when and where
/// its operations run holds here too; in addition:
/// - ``fetchNextDataFromOrigin(nextCursor:data:)`` runs at most once at a time per key and manager, in
///   a task of its own that the store cancels when nobody waits for the page any more. It may run while
///   ``fetchDataFromOrigin()`` of a cancelled refresh finishes, but never while a refresh is loading.
/// - ``mergeNextPage(_:into:)`` and ``saveDataToCache(newData:)`` then run under the key's write turn,
///   on the cached value read again at that moment, so a page is merged into exactly what the cache
///   holds and never into a value a refresh or update replaced.
///
/// The cursor is whatever your API continues a list with: a `String` token, an `Int` page number or
/// offset, or a struct of your own. `nil` is the only way to say "no more pages".
public protocol PaginationStoreFlowableCallback: Sendable {
    /// The type that identifies one list, such as a feed id.
    associatedtype Key: Hashable & Sendable
    /// The type of the loaded pages merged into one value, typically an array of items.
    associatedtype Data: Sendable
    /// The type that identifies a page to the origin.
    associatedtype Cursor: Sendable

    /// The key this callback serves.
    var key: Key { get }

    /// The manager that tracks the state of this key; share one instance between all callbacks of the
    /// same kind of data.
    var flowableDataStateManager: FlowableDataStateManager<Key> { get }

    /// Reads the cached pages of ``key`` with their cursors.
    ///
    /// - Returns: The cached record, or `nil` when nothing is cached.
    /// - Throws: Any error. The store treats a throwing read as a cache miss, except in
    ///   `requireData(from: .cache)` (which throws ``StoreFlowableError/cacheReadFailed(underlying:)``)
    ///   and when a page is about to be merged (the page request then fails with that error).
    func loadDataFromCache() async throws -> PagedData<Data, Cursor>?

    /// Writes the cached pages of ``key`` with their cursors; `nil` deletes them.
    ///
    /// - Parameter newData: The record to store, or `nil` to delete it.
    /// - Throws: Any error. The store then reports ``StoreFlowableError/cacheWriteFailed(underlying:)``
    ///   and keeps the last good value as the state's content.
    func saveDataToCache(newData: PagedData<Data, Cursor>?) async throws

    /// Fetches the first page of ``key`` from the origin, with the cursor of the page after it.
    ///
    /// A refresh replaces every cached page with this one.
    ///
    /// - Returns: The first page and its cursors.
    /// - Throws: Any error; the state becomes `.error(content:rawError:)` with the cached pages kept.
    func fetchDataFromOrigin() async throws -> PagedData<Data, Cursor>

    /// Fetches the page that follows the cached data.
    ///
    /// - Parameters:
    ///   - nextCursor: The cached next cursor.
    ///   - data: The cached data, for APIs that continue from the last item rather than from a cursor.
    /// - Returns: The page, with the cursor of the page after it (`nil` when it is the last page).
    /// - Throws: Any error; the state becomes `.completed(content:next:prev:)` with `next` set to
    ///   `.error(rawError:)` and the content kept.
    func fetchNextDataFromOrigin(nextCursor: Cursor, data: Data) async throws -> FetchedPage<Data, Cursor>

    /// Merges a page fetched after the cached data into it.
    ///
    /// The store then writes the result, with the page's cursor as the new next cursor, through
    /// ``saveDataToCache(newData:)``. It has a default for data that is a `RangeReplaceableCollection`
    /// (such as an array): it appends the page.
    ///
    /// - Parameters:
    ///   - page: The items of the page just fetched.
    ///   - cachedData: What the cache holds now.
    /// - Returns: The data with the page merged at its end.
    func mergeNextPage(_ page: Data, into cachedData: Data) -> Data

    /// Bounds the cached list after a next page was merged into it: returns the record to cache.
    ///
    /// The default keeps everything. To keep a long list bounded (as TanStack Query's `maxPages`
    /// does), drop items from the far end, the start, and set the record's previous cursor so that the
    /// dropped items can be loaded again as previous pages; with one-way paging they come back with a
    /// refresh. ``PagedData/keepingLast(_:prevCursor:)`` does this for collections. It runs while the
    /// key's write turn is held, right after ``mergeNextPage(_:into:)``: keep it quick.
    ///
    /// - Parameter record: The cached data with the page merged and the page's next cursor.
    /// - Returns: The record to write.
    func trimAfterNextPage(_ record: PagedData<Data, Cursor>) -> PagedData<Data, Cursor>

    /// Whether something other than the stores of this library writes the cache: another process
    /// sharing a database, a cleanup job.
    ///
    /// When `false` (the default), a page is merged into the cache read its fetch started with, as
    /// long as no store of the key's state manager wrote the cache since; that saves one cache read
    /// per page (see the cost per page in `Docs/Pagination.md`). When `true`, every merge reads the
    /// cache again while the write turn is held, so a write made elsewhere is never merged over.
    var cacheHasOtherWriters: Bool { get }

    /// Decides whether the cached data is stale and must be fetched again from its first page.
    ///
    /// - Parameter cachedData: The data just read from the cache.
    /// - Returns: `true` when the data must be refreshed before it is served as valid.
    func needRefresh(cachedData: Data) async -> Bool
}

extension PaginationStoreFlowableCallback where Data: RangeReplaceableCollection {
    /// Appends the page to the cached data.
    ///
    /// - Parameters:
    ///   - page: The items of the page just fetched.
    ///   - cachedData: What the cache holds now.
    /// - Returns: `cachedData` followed by `page`.
    public func mergeNextPage(_ page: Data, into cachedData: Data) -> Data {
        var merged = cachedData
        merged.append(contentsOf: page)
        return merged
    }
}

extension PaginationStoreFlowableCallback {
    /// Keeps the whole list: no bound.
    ///
    /// - Parameter record: The cached data with the page merged.
    /// - Returns: `record` unchanged.
    public func trimAfterNextPage(_ record: PagedData<Data, Cursor>) -> PagedData<Data, Cursor> {
        record
    }

    /// Only this library's stores write the cache.
    public var cacheHasOtherWriters: Bool { false }

    /// Creates the store that serves this callback's list.
    ///
    /// Creating a store is cheap; stores created from callbacks with the same key and manager share one
    /// state, including the single flight of each direction.
    ///
    /// - Returns: A type-erased paginated store.
    public func create() -> AnyPaginationStoreFlowable<Data, Cursor> {
        AnyPaginationStoreFlowable(PaginationCallbackStore(callback: self))
    }
}
