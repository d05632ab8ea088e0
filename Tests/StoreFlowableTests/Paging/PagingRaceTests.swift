import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promise 2 of paging: a refresh, update or clear that happens while a page loads wins; the page is
/// never merged into the data that replaced the one it was fetched for.
@Suite("Paging: replacements win over pages in flight", .timeLimit(.minutes(1)))
struct PagingRaceTests {
    static let base = PagedData(data: [10, 11], nextCursor: 12, prevCursor: 9)

    enum Replacement: CaseIterable { case refresh, update, clear }

    /// Starts `replacement` on `store` and waits until it has superseded the page.
    static func replace(
        _ replacement: Replacement, on store: AnyTwoWayPaginationStoreFlowable<[Int], Int>, fixture: PagingFixture
    ) async {
        switch replacement {
        case .refresh:
            fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
            await store.refresh()
        case .update:
            await store.update(newData: [7, 7], nextCursor: 8, prevCursor: nil)
        case .clear:
            fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
            await store.clear()
        }
    }

    static func expectedRecord(after replacement: Replacement) -> PagedData<[Int], Int>? {
        switch replacement {
        case .refresh: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil)
        case .update: PagedData(data: [7, 7], nextCursor: 8, prevCursor: nil)
        case .clear: nil
        }
    }

    @Test(arguments: Replacement.allCases, PageDirection.allCases)
    func aReplacementDuringThePageFetchDiscardsThePage(replacement: Replacement, direction: PageDirection)
        async throws
    {
        let fixture = PagingFixture(cached: Self.base)
        let origin = direction == .next ? fixture.nextOrigin : fixture.prevOrigin
        origin.enqueue(value: FetchedPage(data: [99], cursor: 100))
        origin.hold()
        let store = fixture.store
        let page = Task { direction == .next ? await store.requestNextData() : await store.requestPrevData() }
        await origin.waitForCalls(1)
        await Self.replace(replacement, on: store, fixture: fixture)
        // The page request was released when the replacement superseded it, and its fetch cancelled.
        _ = await page.valueOrCancel
        await origin.waitForCancellations(1)
        origin.release()
        #expect(fixture.cache.value == Self.expectedRecord(after: replacement))
        #expect(fixture.cache.writes.contains { $0?.data.contains(99) == true } == false)
        await fixture.waitUntilReleased()
    }

    @Test(arguments: Replacement.allCases)
    func aPageThatReturnsWhileTheReplacementWritesIsDiscarded(replacement: Replacement) async throws {
        // The page's origin ignores cancellation and returns after the replacement began: it must not be
        // written after (or merged into) the replacement.
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [99], cursor: 100))
        fixture.nextOrigin.hold()
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        let page = Task { await store.requestNextData() }
        await fixture.nextOrigin.waitForCalls(1)
        fixture.cache.holdWrites()
        let replacing = Task { await Self.replace(replacement, on: store, fixture: fixture) }
        await fixture.cache.waitForWriteAttempts(1)
        _ = await page.valueOrCancel
        fixture.cache.releaseWrites()
        await replacing.valueOrCancel
        fixture.nextOrigin.release()
        let expected = Self.expectedRecord(after: replacement)
        if let expected {
            try await recorder.waitForLatest { $0.content == expected.data && $0.isCompleted }
        } else {
            // A clear with a subscriber fetches the first page again.
            try await recorder.waitForLatest { $0.content == [1, 2] && $0.isCompleted }
        }
        #expect(fixture.cache.writes.contains { $0?.data.contains(99) == true } == false)
        #expect(recorder.states.contains { $0.content?.contains(99) == true } == false)
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func aPageAlreadyWritingFinishesAndTheRefreshWritesAfterIt() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        fixture.cache.holdWrites()
        let store = fixture.store
        let page = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)
        let refresh = Task { await store.refresh() }
        await fixture.origin.waitForCalls(1)
        await eventually {
            await fixture.manager.writeQueueLength(for: "list", PagingFixture.Record.self) == 1
        }
        fixture.cache.releaseWrites()
        _ = await page.valueOrCancel
        await refresh.valueOrCancel
        #expect(fixture.cache.writes.map { $0?.data } == [[10, 11, 12], [1, 2]])
        #expect(fixture.cache.value == PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        await fixture.waitUntilReleased()
    }

    @Test func aPageRequestDuringARefreshDoesNothing() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        fixture.origin.hold()
        let store = fixture.store
        let refresh = Task { await store.refresh() }
        await fixture.origin.waitForCalls(1)
        await store.requestNextData()
        await store.requestPrevData()
        #expect(fixture.nextOrigin.callCount == 0)
        #expect(fixture.prevOrigin.callCount == 0)
        fixture.origin.release()
        await refresh.valueOrCancel
        // After the refresh, the next page continues from the new first page's cursor.
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [3], cursor: nil))
        await store.requestNextData()
        #expect(fixture.callback.requestedNextCursors == [3])
        #expect(fixture.cache.value == PagedData(data: [1, 2, 3], nextCursor: nil, prevCursor: nil))
        await fixture.waitUntilReleased()
    }

    @Test func aPageRequestDuringAnUpdateDoesNothing() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.cache.holdWrites()
        let store = fixture.store
        let update = Task { await store.update(newData: [5]) }
        await fixture.cache.waitForWriteAttempts(1)
        await store.requestNextData()
        #expect(fixture.nextOrigin.callCount == 0)
        fixture.cache.releaseWrites()
        await update.valueOrCancel
        // `update(newData:)` kept the cursors.
        #expect(fixture.cache.value == PagedData(data: [5], nextCursor: 12, prevCursor: 9))
        await fixture.waitUntilReleased()
    }
}
