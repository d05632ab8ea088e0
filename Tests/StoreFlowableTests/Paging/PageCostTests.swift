import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// What a page costs in cache reads and writes, and lists bounded by the trim hooks.
@Suite(.timeLimit(.minutes(1)))
struct PageCostTests {
    private typealias Record = PagingFixture.Record

    @Test func aPageCostsTwoReadsAndOneWriteWhenNothingWroteMeanwhile() async throws {
        let fixture = PagingFixture(cached: Record(data: [1], nextCursor: 2, prevCursor: nil))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [2], cursor: 3))
        let reads = fixture.cache.readCount
        _ = await fixture.store.requestNextData()
        // The caller's read (cursor and staleness) and the page's read (cursor for the fetch); the merge
        // reuses the page's read.
        #expect(fixture.cache.readCount - reads == 2)
        #expect(fixture.cache.writeCount == 1)
        #expect(fixture.cache.value == Record(data: [1, 2], nextCursor: 3, prevCursor: nil))
    }

    @Test func aWriteWhileThePageLoadsMakesTheMergeReadAgain() async throws {
        let fixture = PagingFixture(cached: Record(data: [1], nextCursor: 2, prevCursor: 0))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [2], cursor: 3))
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [0], cursor: nil))
        fixture.nextOrigin.hold()
        let store = fixture.store
        let next = Task { await store.requestNextData() }
        await fixture.nextOrigin.waitForCalls(1)
        // The previous page is merged while the next one loads: the next page must merge into it.
        #expect(await String(describing: store.requestPrevData()) == ".loaded")
        fixture.nextOrigin.release()
        #expect(await String(describing: next.valueOrCancel) == ".loaded")
        #expect(fixture.cache.value == Record(data: [0, 1, 2], nextCursor: 3, prevCursor: nil))
    }

    @Test func aCacheWithOtherWritersIsReadAgainForEveryMerge() async throws {
        let fixture = PagingFixture(cached: Record(data: [1], nextCursor: 2, prevCursor: nil))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [2], cursor: 3))
        let store = SharedCacheCallback(base: fixture.callback).create()
        let reads = fixture.cache.readCount
        _ = await store.requestNextData()
        #expect(fixture.cache.readCount - reads == 3)
    }

    @Test func aBoundedListDropsItsFarEndAndMovesThatCursor() async throws {
        let fixture = PagingFixture(cached: Record(data: [1, 2], nextCursor: 3, prevCursor: nil))
        var callback = SharedCacheCallback(base: fixture.callback, otherWriters: false)
        callback.keepAtMost = 4
        let store = callback.create()
        for page in stride(from: 3, through: 7, by: 2) {
            fixture.nextOrigin.enqueue(value: FetchedPage(data: [page, page + 1], cursor: page + 2))
            #expect(String(describing: await store.requestNextData()) == ".loaded")
        }
        // [1 … 8] was cut to its last 4 items; the page before item 5 has cursor 4.
        #expect(fixture.cache.value == Record(data: [5, 6, 7, 8], nextCursor: 9, prevCursor: 4))
        // Going back loads the dropped items again and drops the other end.
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [3, 4], cursor: 2))
        #expect(String(describing: await store.requestPrevData()) == ".loaded")
        #expect(fixture.cache.value == Record(data: [3, 4, 5, 6], nextCursor: 7, prevCursor: 2))
        #expect(try await store.nextPageState().cursor == 7)
    }

    @Test func keepingHelpersLeaveShortListsAlone() {
        let record = PagedData(data: [1, 2, 3], nextCursor: 4, prevCursor: 0)
        #expect(record.keepingLast(3) { _ in 99 } == record)
        #expect(record.keepingFirst(5) { _ in 99 } == record)
        #expect(record.keepingLast(0) { $0 - 1 } == PagedData(data: [3], nextCursor: 4, prevCursor: 2))
        #expect(record.keepingFirst(1) { $0 + 1 } == PagedData(data: [1], nextCursor: 2, prevCursor: 0))
    }

}
