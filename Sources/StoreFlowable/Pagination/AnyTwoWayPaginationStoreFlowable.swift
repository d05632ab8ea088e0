/// A type-erased ``TwoWayPaginationStoreFlowable``: what
/// ``TwoWayPaginationStoreFlowableCallback/create()`` returns.
///
/// It is a small `Sendable` value; copy it freely and share it between tasks. All copies, and all
/// stores created for the same key and manager, share one state.
public struct AnyTwoWayPaginationStoreFlowable<Data: Sendable, Cursor: Sendable>: TwoWayPaginationStoreFlowable {
    private let base: any TwoWayPaginationStoreFlowable<Data, Cursor>

    /// Wraps `base`, forwarding every call to it.
    ///
    /// - Parameter base: The store to wrap.
    public init(_ base: some TwoWayPaginationStoreFlowable<Data, Cursor>) {
        if let erased = base as? AnyTwoWayPaginationStoreFlowable<Data, Cursor> {
            self = erased
        } else {
            self.base = base
        }
    }

    /// See ``StoreFlowable/publish(forceRefresh:)``.
    ///
    /// - Parameter forceRefresh: When `true`, fetch the first page even if the cache is valid.
    /// - Returns: A stream of states, one subscription per call.
    public func publish(forceRefresh: Bool = false) -> AsyncStream<LoadingState<Data>> {
        base.publish(forceRefresh: forceRefresh)
    }

    /// See ``StoreFlowable/getData(from:)``.
    ///
    /// - Parameter from: Where the value may come from.
    /// - Returns: The value, or `nil` when ``requireData(from:)`` would throw.
    public func getData(from: GettingFrom = .both) async -> Data? {
        await base.getData(from: from)
    }

    /// See ``StoreFlowable/requireData(from:)``.
    ///
    /// - Parameter from: Where the value may come from.
    /// - Returns: The value.
    /// - Throws: The errors listed at ``StoreFlowable/requireData(from:)``.
    public func requireData(from: GettingFrom = .both) async throws -> Data {
        try await base.requireData(from: from)
    }

    /// See ``StoreFlowable/validate()``.
    public func validate() async {
        await base.validate()
    }

    /// See ``StoreFlowable/refresh()``.
    public func refresh() async {
        await base.refresh()
    }

    /// See ``StoreFlowable/update(newData:)``; the cached cursors are kept.
    ///
    /// - Parameter newData: The new value, or `nil` to delete the cached record.
    public func update(newData: Data?) async {
        await base.update(newData: newData)
    }

    /// See ``PaginationStoreFlowable/update(newData:nextCursor:)``; the cached previous cursor is kept.
    ///
    /// - Parameters:
    ///   - newData: The new value, or `nil` to delete the cached record.
    ///   - nextCursor: The cursor of the page after `newData`, or `nil` when there is none.
    public func update(newData: Data?, nextCursor: Cursor?) async {
        await base.update(newData: newData, nextCursor: nextCursor)
    }

    /// See ``StoreFlowable/update(_:)``; the cached cursors are kept.
    ///
    /// - Parameter transform: Makes the new data from the cached data.
    /// - Throws: The errors listed at ``StoreFlowable/update(_:)``.
    public func update(_ transform: @escaping @Sendable (Data?) throws -> Data?) async throws {
        try await base.update(transform)
    }

    /// See ``StoreFlowable/invalidate()``.
    ///
    /// - Throws: The errors listed at ``StoreFlowable/invalidate()``.
    public func invalidate() async throws {
        try await base.invalidate()
    }

    /// See ``StoreFlowable/reloadFromCache()``.
    public func reloadFromCache() async {
        await base.reloadFromCache()
    }

    /// See ``StoreFlowable/clear()``.
    public func clear() async {
        await base.clear()
    }

    /// See ``StoreFlowable/dataState()``.
    ///
    /// - Returns: The key's current state.
    public func dataState() async -> DataState {
        await base.dataState()
    }

    /// See ``PaginationStoreFlowable/requestNextData(continueWhenError:)``.
    ///
    /// - Parameter continueWhenError: Whether to retry after the last next-page load failed.
    /// - Returns: What the request did.
    @discardableResult
    public func requestNextData(continueWhenError: Bool = true) async -> PageRequestResult {
        await base.requestNextData(continueWhenError: continueWhenError)
    }

    /// See ``PaginationStoreFlowable/nextPageState()``.
    ///
    /// - Returns: The next direction's state and cached cursor.
    /// - Throws: ``StoreFlowableError/cacheReadFailed(underlying:)`` when the cache read throws.
    public func nextPageState() async throws -> PageState<Cursor> {
        try await base.nextPageState()
    }

    /// See ``TwoWayPaginationStoreFlowable/requestPrevData(continueWhenError:)``.
    ///
    /// - Parameter continueWhenError: Whether to retry after the last previous-page load failed.
    /// - Returns: What the request did.
    @discardableResult
    public func requestPrevData(continueWhenError: Bool = true) async -> PageRequestResult {
        await base.requestPrevData(continueWhenError: continueWhenError)
    }

    /// See ``TwoWayPaginationStoreFlowable/prevPageState()``.
    ///
    /// - Returns: The previous direction's state and cached cursor.
    /// - Throws: ``StoreFlowableError/cacheReadFailed(underlying:)`` when the cache read throws.
    public func prevPageState() async throws -> PageState<Cursor> {
        try await base.prevPageState()
    }

    /// See ``TwoWayPaginationStoreFlowable/update(newData:nextCursor:prevCursor:)``.
    ///
    /// - Parameters:
    ///   - newData: The new value, or `nil` to delete the cached record.
    ///   - nextCursor: The cursor of the page after `newData`, or `nil` when there is none.
    ///   - prevCursor: The cursor of the page before `newData`, or `nil` when there is none.
    public func update(newData: Data?, nextCursor: Cursor?, prevCursor: Cursor?) async {
        await base.update(newData: newData, nextCursor: nextCursor, prevCursor: prevCursor)
    }
}
