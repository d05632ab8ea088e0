import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promises 4–6 of paging (no cursor, nothing loaded yet, stale data), the states `publish()` shows
/// while paging, and how updates treat the cursors.
@Suite("Paging: requests, streams and updates", .timeLimit(.minutes(1)))
struct PagingRequestTests {
    @Test func aNilCursorMeansNoMorePagesAndRequestsFetchNothing() async throws {
        let fixture = PagingFixture(cached: PagedData(data: [1], nextCursor: nil, prevCursor: nil))
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.snapshot == .completed([1]) }
        await store.requestNextData()
        await store.requestPrevData()
        #expect(fixture.nextOrigin.callCount == 0)
        #expect(fixture.prevOrigin.callCount == 0)
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func aNoMoreRequestDoesNotTouchTheStateManager() async throws {
        let fixture = PagingFixture(cached: PagedData(data: [1], nextCursor: nil, prevCursor: nil))
        await fixture.store.requestNextData()
        #expect(fixture.cache.readCount == 1)
        #expect(await fixture.manager.trackedKeyCount == 0)
    }

    @Test func anEmptyStringCursorIsAnOrdinaryCursor() async throws {
        let callback = TestPaginationCallback<String, [Int], String>(
            key: "list", manager: FlowableDataStateManager(),
            cache: InMemoryCache(PagedData(data: [1], nextCursor: "")),
            nextOrigin: ScriptedOrigin([.success(FetchedPage(data: [2], cursor: nil))]))
        let store = OneWayPaginationCallback(callback).create()
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest {
            $0.snapshot == .completedPaging([1], next: .fixed(canRequestAdditionalData: true), prev: .noMoreData)
        }
        await store.requestNextData()
        #expect(callback.requestedNextCursors == [""])
        try await recorder.waitForLatest { $0.snapshot == .completed([1, 2]) }
        recorder.cancel()
    }

    @Test func aRequestWithNothingCachedDoesNothing() async throws {
        let fixture = PagingFixture()
        await fixture.store.requestNextData()
        await fixture.store.requestPrevData()
        #expect(fixture.nextOrigin.callCount == 0)
        #expect(fixture.prevOrigin.callCount == 0)
        #expect(fixture.origin.callCount == 0)
        #expect(await fixture.manager.trackedKeyCount == 0)
    }

    @Test func aRequestWhileTheFirstPageLoadsDoesNothing() async throws {
        let fixture = PagingFixture()
        fixture.origin.enqueue(value: PagedData(data: [1], nextCursor: 2, prevCursor: 0))
        fixture.origin.hold()
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        await fixture.origin.waitForCalls(1)
        await store.requestNextData()
        await store.requestPrevData()
        #expect(fixture.nextOrigin.callCount == 0)
        #expect(fixture.prevOrigin.callCount == 0)
        fixture.origin.release()
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging(
                    [1], next: .fixed(canRequestAdditionalData: true), prev: .fixed(canRequestAdditionalData: true))
        }
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func aRequestOnStaleDataRefreshesTheFirstPageInsteadOfAppending() async throws {
        let fixture = PagingFixture(cached: PagedData(data: [-1, 0], nextCursor: 1, prevCursor: nil))
        fixture.origin.enqueue(value: PagedData(data: [5, 6], nextCursor: 7, prevCursor: nil))
        let store = fixture.oneWayStore
        await store.requestNextData()
        #expect(fixture.nextOrigin.callCount == 0)
        #expect(fixture.origin.callCount == 1)
        #expect(fixture.cache.value == PagedData(data: [5, 6], nextCursor: 7, prevCursor: nil))
        await fixture.waitUntilReleased()
    }

    @Test func publishShowsEachPageLoadingAndMerged() async throws {
        let fixture = PagingFixture()
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [3, 4], cursor: 5))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [5], cursor: nil))
        let store = fixture.oneWayStore
        let recorder = StateRecorder(store.publish())
        let more = AdditionalSnapshot.fixed(canRequestAdditionalData: true)
        try await recorder.waitForLatest { $0.snapshot == .completedPaging([1, 2], next: more, prev: .noMoreData) }
        await store.requestNextData()
        try await recorder.waitForLatest { $0.content == [1, 2, 3, 4] }
        await store.requestNextData()
        let states = try await recorder.waitUntil { $0.last?.snapshot == .completed([1, 2, 3, 4, 5]) }
        // The stream conflates, so a slow consumer may skip a state, but never sees them out of order.
        let expected: [StateSnapshot<[Int]>] = [
            .loading(nil),
            .completedPaging([1, 2], next: more, prev: .noMoreData),
            .completedPaging([1, 2], next: .loading, prev: .noMoreData),
            .completedPaging([1, 2, 3, 4], next: more, prev: .noMoreData),
            .completedPaging([1, 2, 3, 4], next: .loading, prev: .noMoreData),
            .completed([1, 2, 3, 4, 5]),
        ]
        #expect(states.map(\.snapshot).isSubsequence(of: expected))
        recorder.cancel()
    }

    @Test func aOneWayStoreNeverReportsAPreviousPage() async throws {
        // Even if the cached record carries a previous cursor, one-way paging has no previous pages.
        let fixture = PagingFixture(cached: PagedData(data: [1], nextCursor: nil, prevCursor: 0))
        let recorder = StateRecorder(fixture.oneWayStore.publish())
        try await recorder.waitForLatest { $0.snapshot == .completed([1]) }
        recorder.cancel()
    }

    @Test func updateKeepsTheCursorsAndUpdateWithCursorsSetsThem() async throws {
        let fixture = PagingFixture(cached: PagedData(data: [1], nextCursor: 2, prevCursor: 0))
        let store = fixture.store
        await store.update(newData: [9])
        #expect(fixture.cache.value == PagedData(data: [9], nextCursor: 2, prevCursor: 0))
        await store.update(newData: [8], nextCursor: nil)
        #expect(fixture.cache.value == PagedData(data: [8], nextCursor: nil, prevCursor: 0))
        await store.update(newData: [7], nextCursor: 3, prevCursor: nil)
        #expect(fixture.cache.value == PagedData(data: [7], nextCursor: 3, prevCursor: nil))
        await store.update(newData: nil, nextCursor: 4, prevCursor: 4)
        #expect(fixture.cache.value == nil)
        // A one-way store sets the next cursor without reading the cache.
        let reads = fixture.cache.readCount
        await fixture.oneWayStore.update(newData: [6], nextCursor: 5)
        #expect(fixture.cache.readCount == reads)
        #expect(fixture.cache.value == PagedData(data: [6], nextCursor: 5, prevCursor: nil))
        await fixture.waitUntilReleased()
    }

    @Test func getDataAndRequireDataServeTheMergedPages() async throws {
        let fixture = PagingFixture(cached: PagedData(data: [1], nextCursor: 2, prevCursor: nil))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [2], cursor: nil))
        let store = fixture.store
        #expect(await store.getData() == [1])
        await store.requestNextData()
        #expect(try await store.requireData(from: .cache) == [1, 2])
        let state = await store.dataState()
        #expect(!state.isLoading && state.rawError == nil)
    }
}

extension Array where Element: Equatable {
    /// Whether this array's elements appear in `other` in the same order (not necessarily adjacent).
    func isSubsequence(of other: [Element]) -> Bool {
        var remaining = other[...]
        for element in self {
            guard let index = remaining.firstIndex(of: element) else { return false }
            remaining = remaining[(index + 1)...]
        }
        return true
    }
}
