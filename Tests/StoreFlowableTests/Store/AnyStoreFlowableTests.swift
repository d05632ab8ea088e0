import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// The type-erased store forwards every call to what it wraps: a store of your own (a data-layer
/// double, say) keeps its own `getData` even though stores from `create()` take a specialised path.
@Suite(.timeLimit(.minutes(1)))
struct AnyStoreFlowableTests {
    /// A store whose `getData` and `requireData` answer differently, so the test can tell which ran.
    struct DistinctStore: StoreFlowable {
        func publish(forceRefresh: Bool) -> AsyncStream<LoadingState<String>> { AsyncStream { $0.finish() } }
        func getData(from: GettingFrom) async -> String? { "getData(\(from))" }
        func requireData(from: GettingFrom) async throws -> String { "requireData(\(from))" }
        func validate() async {}
        func refresh() async {}
        func update(newData: String?) async {}
        func update(_ transform: @escaping @Sendable (String?) throws -> String?) async throws {}
        func invalidate() async throws {}
        func clear() async {}
        func dataState() async -> DataState { .fixed }
    }

    @Test func aStoreOfYourOwnKeepsItsOwnGetDataAndRequireData() async throws {
        let store = AnyStoreFlowable(DistinctStore())
        #expect(await store.getData(from: .cache) == "getData(cache)")
        #expect(try await store.requireData(from: .origin) == "requireData(origin)")
        // Wrapping twice changes nothing.
        let twice = AnyStoreFlowable(store)
        #expect(await twice.getData(from: .both) == "getData(both)")
    }

    @Test func aStoreFromCreateServesTheCacheAndFetchesThroughTheSpecialisedPath() async throws {
        let fixture = StoreFixture(cached: "valid")
        let store = AnyStoreFlowable(fixture.store)
        #expect(await store.getData() == "valid")
        #expect(try await store.requireData(from: .origin) == "fresh-1")
        #expect(await store.getData(from: .cache) == "fresh-1")
        #expect(fixture.origin.callCount == 1)
    }
}
