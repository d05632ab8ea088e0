/// Presents a paginated callback as a ``StoreFlowableCallback`` of its cached record, so the core store
/// serves paged data with its state manager, single flight and state stream.
struct PagingAdapter<Callback: PaginationStoreFlowableCallback>: StoreFlowableCallback {
    typealias Key = Callback.Key
    typealias Data = PagedData<Callback.Data, Callback.Cursor>

    /// The user's operations.
    let callback: Callback

    var key: Key { callback.key }

    var flowableDataStateManager: FlowableDataStateManager<Key> { callback.flowableDataStateManager }

    func loadDataFromCache() async throws -> Data? {
        try await callback.loadDataFromCache()
    }

    func saveDataToCache(newData: Data?) async throws {
        try await callback.saveDataToCache(newData: newData)
    }

    func fetchDataFromOrigin() async throws -> Data {
        try await callback.fetchDataFromOrigin()
    }

    func needRefresh(cachedData: Data) async -> Bool {
        await callback.needRefresh(cachedData: cachedData.data)
    }

    /// Fetches the next page after `record` and returns how to merge it, or `nil` without a next cursor.
    func fetchNext(after record: Data) async throws -> (@Sendable (Data) -> Data)? {
        guard let cursor = record.nextCursor else { return nil }
        let page = try await callback.fetchNextDataFromOrigin(nextCursor: cursor, data: record.data)
        let callback = callback
        return { current in
            callback.trimAfterNextPage(
                PagedData(
                    data: callback.mergeNextPage(page.data, into: current.data), nextCursor: page.cursor,
                    prevCursor: current.prevCursor))
        }
    }

    /// Loads pages after the data only: one-way paging.
    var oneWayPages: PageLoader<Data> {
        PageLoader(
            rereadsBeforeMerging: callback.cacheHasOtherWriters,
            hasCursor: { record, direction in direction == .next && record.nextCursor != nil },
            fetch: { direction, record in
                direction == .next ? try await fetchNext(after: record) : nil
            })
    }
}

extension PagingAdapter where Callback: TwoWayPaginationStoreFlowableCallback {
    /// Fetches the previous page before `record` and returns how to merge it, or `nil` without a
    /// previous cursor.
    func fetchPrev(before record: Data) async throws -> (@Sendable (Data) -> Data)? {
        guard let cursor = record.prevCursor else { return nil }
        let page = try await callback.fetchPrevDataFromOrigin(prevCursor: cursor, data: record.data)
        let callback = callback
        return { current in
            callback.trimAfterPrevPage(
                PagedData(
                    data: callback.mergePrevPage(page.data, into: current.data), nextCursor: current.nextCursor,
                    prevCursor: page.cursor))
        }
    }

    /// Loads pages on both sides of the data: two-way paging.
    var twoWayPages: PageLoader<Data> {
        PageLoader(
            rereadsBeforeMerging: callback.cacheHasOtherWriters,
            hasCursor: { record, direction in
                switch direction {
                case .next: record.nextCursor != nil
                case .prev: record.prevCursor != nil
                }
            },
            fetch: { direction, record in
                switch direction {
                case .next: try await fetchNext(after: record)
                case .prev: try await fetchPrev(before: record)
                }
            })
    }
}
