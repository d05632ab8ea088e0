import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Page requests return what they did, and each direction's state and cursor can be read without
/// subscribing: what a server handler needs to answer "is there another page?".
@Suite(.timeLimit(.minutes(1)))
struct PageRequestResultTests {
    private typealias Record = PagingFixture.Record

    @Test func aLoadedPageAndTheEndOfTheListAreReported() async throws {
        let fixture = PagingFixture(cached: Record(data: [1], nextCursor: 2, prevCursor: nil))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [2], cursor: nil))
        let store = fixture.oneWayStore
        let before = try await store.nextPageState()
        #expect(before.cursor == 2 && before.canRequestAdditionalData)
        #expect(String(describing: await store.requestNextData()) == ".loaded")
        let after = try await store.nextPageState()
        #expect(after.cursor == nil && !after.canRequestAdditionalData)
        #expect(String(describing: await store.requestNextData()) == ".noMorePages")
        #expect(fixture.nextOrigin.callCount == 1)
        await fixture.waitUntilReleased()
    }

    @Test func aFailedPageIsReportedAndTurnsAwayARequestThatDoesNotRetry() async throws {
        let fixture = PagingFixture(cached: Record(data: [1], nextCursor: 2, prevCursor: nil))
        fixture.nextOrigin.enqueue(error: TestError("down"))
        let store = fixture.store
        #expect(String(describing: await store.requestNextData()) == ".failed(down)")
        let state = try await store.nextPageState()
        guard case .error(let error) = state.state else {
            Issue.record("expected .error, got \(state.state)")
            return
        }
        #expect(error as? TestError == TestError("down"))
        #expect(state.cursor == 2 && !state.canRequestAdditionalData)
        #expect(
            String(describing: await store.requestNextData(continueWhenError: false)) == ".turnedAway(.lastPageFailed)")
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [2], cursor: 3))
        #expect(String(describing: await store.requestNextData()) == ".loaded")
        #expect(fixture.cache.value == Record(data: [1, 2], nextCursor: 3, prevCursor: nil))
    }

    @Test func requestsWithNothingCachedOrAStaleListSayWhatHappened() async throws {
        let empty = PagingFixture()
        #expect(String(describing: await empty.store.requestNextData()) == ".turnedAway(.nothingCached)")
        let nothing = try await empty.store.nextPageState()
        #expect(nothing.cursor == nil && !nothing.canRequestAdditionalData)

        let stale = PagingFixture(cached: Record(data: [-1], nextCursor: 2, prevCursor: nil))
        stale.origin.enqueue(value: Record(data: [1], nextCursor: 5, prevCursor: nil))
        #expect(String(describing: await stale.store.requestNextData()) == ".refreshedFirstPage")
        #expect(try await stale.store.nextPageState().cursor == 5)
        #expect(stale.nextOrigin.callCount == 0)

        let failing = PagingFixture(cached: Record(data: [-1], nextCursor: 2, prevCursor: nil))
        failing.origin.enqueue(error: TestError("origin"))
        #expect(String(describing: await failing.store.requestNextData()) == ".failed(origin)")

        // Valid data whose last refresh failed is not settled: pages wait for a successful refresh.
        let unsettled = PagingFixture(cached: Record(data: [1], nextCursor: 2, prevCursor: nil))
        unsettled.origin.enqueue(error: TestError("origin"))
        await unsettled.store.refresh()
        #expect(String(describing: await unsettled.store.requestNextData()) == ".turnedAway(.lastRefreshFailed)")
        #expect(unsettled.nextOrigin.callCount == 0)
    }

    @Test func aRequestWhileTheFirstPageLoadsIsTurnedAway() async throws {
        let fixture = PagingFixture(cached: Record(data: [1], nextCursor: 2, prevCursor: nil))
        fixture.origin.hold()
        let refresh = Task { await fixture.store.refresh() }
        await fixture.origin.waitForCalls(1)
        #expect(String(describing: await fixture.store.requestNextData()) == ".turnedAway(.dataBeingReplaced)")
        fixture.origin.enqueue(value: Record(data: [1], nextCursor: 2, prevCursor: nil))
        fixture.origin.release()
        await refresh.valueOrCancel
    }

    @Test func aPageDroppedByARefreshIsSupersededAndACancelledCallerSaysSo() async throws {
        let fixture = PagingFixture(cached: Record(data: [1], nextCursor: 2, prevCursor: nil))
        fixture.nextOrigin.hold()
        let store = fixture.store
        let page = Task { await store.requestNextData() }
        let cancelled = Task { await store.requestNextData() }
        await fixture.nextOrigin.waitForCalls(1)
        await eventually { await fixture.manager.pageWaiterCount(for: "list", Record.self, .next) == 2 }
        #expect(try await store.nextPageState().state.isLoading)
        cancelled.cancel()
        #expect(String(describing: await cancelled.valueOrCancel) == ".cancelled")
        fixture.origin.enqueue(value: Record(data: [7], nextCursor: 8, prevCursor: nil))
        await store.refresh()
        #expect(String(describing: await page.valueOrCancel) == ".superseded")
        fixture.nextOrigin.release()
        #expect(fixture.cache.value == Record(data: [7], nextCursor: 8, prevCursor: nil))
    }

    @Test func theTwoDirectionsAreReportedSeparately() async throws {
        let fixture = PagingFixture(cached: Record(data: [5], nextCursor: 6, prevCursor: 4))
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [4], cursor: nil))
        let store = fixture.store
        #expect(String(describing: await store.requestPrevData()) == ".loaded")
        #expect(try await store.prevPageState().cursor == nil)
        #expect(try await store.nextPageState().cursor == 6)
        #expect(String(describing: await store.requestPrevData()) == ".noMorePages")
        // A one-way store has no previous direction.
        #expect(try await fixture.oneWayStore.nextPageState().cursor == 6)
    }

    @Test func anUnreadableCacheIsATypedErrorForPageState() async throws {
        let fixture = PagingFixture(cached: Record(data: [1], nextCursor: 2, prevCursor: nil))
        fixture.cache.failReads(with: TestError("disk"))
        await #expect(throws: StoreFlowableError.self) { try await fixture.store.nextPageState() }
    }
}
