/// The store of a two-way paginated callback: the paginated store with its previous direction open.
struct TwoWayPaginationCallbackStore<Callback: TwoWayPaginationStoreFlowableCallback>:
    TwoWayPaginationStoreFlowable
{
    typealias Data = Callback.Data
    typealias Cursor = Callback.Cursor

    private let store: PaginationCallbackStore<Callback>

    /// Creates the store of `callback`.
    init(callback: Callback) {
        store = PaginationCallbackStore(twoWay: callback)
    }

    func publish(forceRefresh: Bool) -> AsyncStream<LoadingState<Data>> {
        store.publish(forceRefresh: forceRefresh)
    }

    func getData(from: GettingFrom) async -> Data? {
        await store.getData(from: from)
    }

    func requireData(from: GettingFrom) async throws -> Data {
        try await store.requireData(from: from)
    }

    func validate() async {
        await store.validate()
    }

    func refresh() async {
        await store.refresh()
    }

    func update(newData: Data?) async {
        await store.update(newData: newData)
    }

    func update(newData: Data?, nextCursor: Cursor?) async {
        await store.update(newData: newData, nextCursor: nextCursor)
    }

    func update(newData: Data?, nextCursor: Cursor?, prevCursor: Cursor?) async {
        await store.update(newData: newData, nextCursor: nextCursor, prevCursor: prevCursor)
    }

    func clear() async {
        await store.clear()
    }

    func dataState() async -> DataState {
        await store.dataState()
    }

    func requestNextData(continueWhenError: Bool) async {
        await store.requestNextData(continueWhenError: continueWhenError)
    }

    func requestPrevData(continueWhenError: Bool) async {
        await store.requestPrevData(continueWhenError: continueWhenError)
    }
}
