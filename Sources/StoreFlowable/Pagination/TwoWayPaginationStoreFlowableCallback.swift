/// The operations you implement so a store can serve a list that grows by pages in both directions,
/// such as a chat history that loads older messages at the top and newer ones at the bottom.
///
/// Everything ``PaginationStoreFlowableCallback`` says holds for the next direction; the previous
/// direction mirrors it. The two directions have a single flight each and may load at the same time;
/// their cache writes take turns, and each merges into what the cache holds at its turn.
public protocol TwoWayPaginationStoreFlowableCallback: PaginationStoreFlowableCallback {
    /// Fetches the page that precedes the cached data.
    ///
    /// - Parameters:
    ///   - prevCursor: The cached previous cursor.
    ///   - data: The cached data, for APIs that continue from the first item rather than from a cursor.
    /// - Returns: The page, with the cursor of the page before it (`nil` when it is the first page).
    /// - Throws: Any error; the state becomes `.completed(content:next:prev:)` with `prev` set to
    ///   `.error(rawError:)` and the content kept.
    func fetchPrevDataFromOrigin(prevCursor: Cursor, data: Data) async throws -> FetchedPage<Data, Cursor>

    /// Merges a page fetched before the cached data into it.
    ///
    /// The store then writes the result, with the page's cursor as the new previous cursor, through
    /// ``PaginationStoreFlowableCallback/saveDataToCache(newData:)``. It has a default for data that is a
    /// `RangeReplaceableCollection`: it prepends the page.
    ///
    /// - Parameters:
    ///   - page: The items of the page just fetched.
    ///   - cachedData: What the cache holds now.
    /// - Returns: The data with the page merged at its start.
    func mergePrevPage(_ page: Data, into cachedData: Data) -> Data

    /// Bounds the cached list after a previous page was merged into it: the mirror of
    /// ``PaginationStoreFlowableCallback/trimAfterNextPage(_:)``, dropping items from the end and
    /// setting the next cursor (``PagedData/keepingFirst(_:nextCursor:)`` does this for collections).
    ///
    /// - Parameter record: The cached data with the page merged and the page's previous cursor.
    /// - Returns: The record to write.
    func trimAfterPrevPage(_ record: PagedData<Data, Cursor>) -> PagedData<Data, Cursor>
}

extension TwoWayPaginationStoreFlowableCallback where Data: RangeReplaceableCollection {
    /// Prepends the page to the cached data.
    ///
    /// - Parameters:
    ///   - page: The items of the page just fetched.
    ///   - cachedData: What the cache holds now.
    /// - Returns: `page` followed by `cachedData`.
    public func mergePrevPage(_ page: Data, into cachedData: Data) -> Data {
        var merged = page
        merged.append(contentsOf: cachedData)
        return merged
    }
}

extension TwoWayPaginationStoreFlowableCallback {
    /// Keeps the whole list: no bound.
    ///
    /// - Parameter record: The cached data with the page merged.
    /// - Returns: `record` unchanged.
    public func trimAfterPrevPage(_ record: PagedData<Data, Cursor>) -> PagedData<Data, Cursor> {
        record
    }
}

extension TwoWayPaginationStoreFlowableCallback {
    /// Creates the store that serves this callback's list in both directions.
    ///
    /// - Returns: A type-erased two-way paginated store.
    public func create() -> AnyTwoWayPaginationStoreFlowable<Data, Cursor> {
        AnyTwoWayPaginationStoreFlowable(PaginationCallbackStore(twoWay: self))
    }
}
