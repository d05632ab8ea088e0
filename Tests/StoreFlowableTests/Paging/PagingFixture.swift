import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// A paged list of `Int` items with `Int` cursors over the test doubles. Data whose first item is
/// negative needs refresh.
struct PagingFixture: Sendable {
    typealias Record = PagedData<[Int], Int>

    let manager: FlowableDataStateManager<String>
    let callback: TestPaginationCallback<String, [Int], Int>

    init(cached: Record? = nil, manager: FlowableDataStateManager<String> = FlowableDataStateManager()) {
        self.manager = manager
        callback = TestPaginationCallback(
            key: "list", manager: manager, cache: InMemoryCache(cached),
            needRefresh: { ($0.first ?? 0) < 0 })
    }

    /// A fixture over a callback built elsewhere.
    init(callback: TestPaginationCallback<String, [Int], Int>) {
        manager = callback.flowableDataStateManager
        self.callback = callback
    }

    var cache: InMemoryCache<Record> { callback.cache }
    var origin: ScriptedOrigin<Record> { callback.origin }
    var nextOrigin: ScriptedOrigin<FetchedPage<[Int], Int>> { callback.nextOrigin }
    var prevOrigin: ScriptedOrigin<FetchedPage<[Int], Int>> { callback.prevOrigin }

    /// A two-way store over the fixture.
    var store: AnyTwoWayPaginationStoreFlowable<[Int], Int> { callback.create() }

    /// A one-way store over the fixture.
    var oneWayStore: AnyPaginationStoreFlowable<[Int], Int> { OneWayPaginationCallback(callback).create() }

    /// Waits until the state manager holds nothing for any key.
    func waitUntilReleased() async {
        await eventually { await manager.trackedKeyCount == 0 }
    }
}
