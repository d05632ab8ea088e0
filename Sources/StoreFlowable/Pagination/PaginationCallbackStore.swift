/// The store of a paginated callback: the core store over the cached record, showing the record's data
/// and turning its cursors into each direction's `canRequestAdditionalData`.
struct PaginationCallbackStore<Callback: PaginationStoreFlowableCallback>: PaginationStoreFlowable {
    typealias Data = Callback.Data
    typealias Cursor = Callback.Cursor
    typealias Record = PagedData<Data, Cursor>

    /// The core store over the cached record.
    let base: CallbackStore<PagingAdapter<Callback>>
    /// Whether the previous direction pages too.
    private let isTwoWay: Bool

    /// Creates the one-way store of `callback`.
    init(callback: Callback) {
        let adapter = PagingAdapter(callback: callback)
        base = CallbackStore(callback: adapter, pages: adapter.oneWayPages)
        isTwoWay = false
    }

    /// Creates the two-way store of `callback`.
    init(twoWay callback: Callback) where Callback: TwoWayPaginationStoreFlowableCallback {
        let adapter = PagingAdapter(callback: callback)
        base = CallbackStore(callback: adapter, pages: adapter.twoWayPages)
        isTwoWay = true
    }

    func publish(forceRefresh: Bool) -> AsyncStream<LoadingState<Data>> {
        let isTwoWay = isTwoWay
        return base.publish(forceRefresh: forceRefresh) { state in state.presentingPages(isTwoWay: isTwoWay) }
    }

    func getData(from: GettingFrom) async -> Data? {
        await base.getData(from: from)?.data
    }

    func requireData(from: GettingFrom) async throws -> Data {
        try await base.requireData(from: from).data
    }

    func validate() async {
        await base.validate()
    }

    func refresh() async {
        await base.refresh()
    }

    func update(newData: Data?) async {
        await base.update(readingCurrent: true) { current in
            newData.map { Record(data: $0, nextCursor: current?.nextCursor, prevCursor: current?.prevCursor) }
        }
    }

    func update(newData: Data?, nextCursor: Cursor?) async {
        if isTwoWay {
            await base.update(readingCurrent: true) { current in
                newData.map { Record(data: $0, nextCursor: nextCursor, prevCursor: current?.prevCursor) }
            }
        } else {
            await base.update(newData: newData.map { Record(data: $0, nextCursor: nextCursor) })
        }
    }

    /// Replaces the cached record with `newData` and both cursors.
    func update(newData: Data?, nextCursor: Cursor?, prevCursor: Cursor?) async {
        await base.update(newData: newData.map { Record(data: $0, nextCursor: nextCursor, prevCursor: prevCursor) })
    }

    func update(_ transform: @escaping @Sendable (Data?) throws -> Data?) async throws {
        try await base.update(reading: .strict) { current in
            try transform(current?.data).map {
                Record(data: $0, nextCursor: current?.nextCursor, prevCursor: current?.prevCursor)
            }
        }
    }

    func invalidate() async throws {
        try await base.invalidate()
    }

    func reloadFromCache() async {
        await base.reloadFromCache()
    }

    func clear() async {
        await base.clear()
    }

    func dataState() async -> DataState {
        await base.dataState()
    }

    func requestNextData(continueWhenError: Bool) async -> PageRequestResult {
        await base.requestPage(.next, continueWhenError: continueWhenError)
    }

    /// Loads the previous page; see ``TwoWayPaginationStoreFlowable/requestPrevData(continueWhenError:)``.
    func requestPrevData(continueWhenError: Bool) async -> PageRequestResult {
        await base.requestPage(.prev, continueWhenError: continueWhenError)
    }

    func nextPageState() async throws -> PageState<Cursor> {
        try await pageState(.next)
    }

    /// The previous direction's state; see ``TwoWayPaginationStoreFlowable/prevPageState()``.
    func prevPageState() async throws -> PageState<Cursor> {
        try await pageState(.prev)
    }

    /// The state of `direction`: what the state manager reports for it, with "nothing loading" turned
    /// into whether the cached record has a cursor that way.
    private func pageState(_ direction: PageDirection) async throws -> PageState<Cursor> {
        let record: Record?
        do {
            record = try await base.callback.loadDataFromCache()
        } catch {
            throw StoreFlowableError.cacheReadFailed(underlying: error)
        }
        let cursor: Cursor? =
            switch direction {
            case .next: record?.nextCursor
            case .prev: isTwoWay ? record?.prevCursor : nil
            }
        let state = await base.pageStatus(direction).withCursor(cursor != nil)
        return PageState(state: state, cursor: cursor)
    }
}

/// The store of a two-way paginated callback is the same store with its previous direction open (made
/// with ``PaginationCallbackStore/init(twoWay:)``).
extension PaginationCallbackStore: TwoWayPaginationStoreFlowable
where Callback: TwoWayPaginationStoreFlowableCallback {}
