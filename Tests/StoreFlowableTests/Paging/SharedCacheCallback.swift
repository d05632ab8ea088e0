import StoreFlowableTesting

@testable import StoreFlowable

/// A fixture's two-way callback whose cache is also written elsewhere (`cacheHasOtherWriters`), and
/// whose merges may bound the list.
struct SharedCacheCallback: TwoWayPaginationStoreFlowableCallback {
    let base: TestPaginationCallback<String, [Int], Int>
    var otherWriters = true
    var keepAtMost: Int?

    var key: String { base.key }
    var flowableDataStateManager: FlowableDataStateManager<String> { base.flowableDataStateManager }
    var cacheHasOtherWriters: Bool { otherWriters }

    func loadDataFromCache() async throws -> PagedData<[Int], Int>? { try await base.loadDataFromCache() }
    func saveDataToCache(newData: PagedData<[Int], Int>?) async throws {
        try await base.saveDataToCache(newData: newData)
    }
    func fetchDataFromOrigin() async throws -> PagedData<[Int], Int> { try await base.fetchDataFromOrigin() }
    func fetchNextDataFromOrigin(nextCursor: Int, data: [Int]) async throws -> FetchedPage<[Int], Int> {
        try await base.fetchNextDataFromOrigin(nextCursor: nextCursor, data: data)
    }
    func fetchPrevDataFromOrigin(prevCursor: Int, data: [Int]) async throws -> FetchedPage<[Int], Int> {
        try await base.fetchPrevDataFromOrigin(prevCursor: prevCursor, data: data)
    }
    func needRefresh(cachedData: [Int]) async -> Bool { await base.needRefresh(cachedData: cachedData) }

    /// Keeps the last `keepAtMost` items; the page before item `n` has cursor `n - 1`.
    func trimAfterNextPage(_ record: PagedData<[Int], Int>) -> PagedData<[Int], Int> {
        guard let keepAtMost else { return record }
        return record.keepingLast(keepAtMost) { $0 - 1 }
    }

    /// Keeps the first `keepAtMost` items; the page after item `n` has cursor `n + 1`.
    func trimAfterPrevPage(_ record: PagedData<[Int], Int>) -> PagedData<[Int], Int> {
        guard let keepAtMost else { return record }
        return record.keepingFirst(keepAtMost) { $0 + 1 }
    }
}
