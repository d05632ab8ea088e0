import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promise 3 of paging: a failed page keeps the content and the other direction's state; the error is
/// typed, kept by `continueWhenError: false`, and retried by `true`.
@Suite("Paging: failed pages", .timeLimit(.minutes(1)))
struct PagingErrorTests {
    static let base = PagedData(data: [10, 11], nextCursor: 12, prevCursor: 9)

    /// A two-way store over `base` with a stream watching it, once the stream shows `base`.
    static func watched(_ fixture: PagingFixture) async throws -> (
        AnyTwoWayPaginationStoreFlowable<[Int], Int>, StateRecorder<[Int]>
    ) {
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.content == [10, 11] && $0.isCompleted }
        return (store, recorder)
    }

    @Test func withoutContinueWhenErrorARequestInTheErrorStateDoesNothingAndKeepsTheError() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(error: TestError("first"))
        fixture.nextOrigin.enqueue(error: TestError("second"))
        let (store, recorder) = try await Self.watched(fixture)
        await store.requestNextData()
        let failed = StateSnapshot<[Int]>.completedPaging(
            [10, 11], next: .error("first"), prev: .fixed(canRequestAdditionalData: true))
        try await recorder.waitForLatest { $0.snapshot == failed }
        await store.requestNextData(continueWhenError: false)
        #expect(fixture.nextOrigin.callCount == 1)
        #expect(recorder.latest?.snapshot == failed)
        // With `true` it retries, and the new failure replaces the old one.
        await store.requestNextData(continueWhenError: true)
        #expect(fixture.nextOrigin.callCount == 2)
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging([10, 11], next: .error("second"), prev: .fixed(canRequestAdditionalData: true))
        }
        recorder.cancel()
    }

    @Test func aFailureInOneDirectionLeavesTheOtherLoading() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(error: TestError("next"))
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [9], cursor: nil))
        fixture.prevOrigin.hold()
        let (store, recorder) = try await Self.watched(fixture)
        let prev = Task { await store.requestPrevData() }
        await fixture.prevOrigin.waitForCalls(1)
        await store.requestNextData()
        try await recorder.waitForLatest {
            $0.snapshot == .completedPaging([10, 11], next: .error("next"), prev: .loading)
        }
        fixture.prevOrigin.release()
        _ = await prev.valueOrCancel
        try await recorder.waitForLatest {
            $0.snapshot == .completedPaging([9, 10, 11], next: .error("next"), prev: .noMoreData)
        }
        recorder.cancel()
    }

    @Test func aPageThatCannotBeWrittenReportsCacheWriteFailedAndKeepsTheContent() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: nil))
        let (store, recorder) = try await Self.watched(fixture)
        fixture.cache.failWrites(with: TestError("disk full"))
        await store.requestNextData()
        let latest = try await recorder.waitForLatest { $0.isCompleted && $0.content == [10, 11] && !$0.isNextFixed }
        guard case .completed(_, .error(let error), _) = latest,
            case StoreFlowableError.cacheWriteFailed(let underlying) = error
        else {
            Issue.record("expected next: .error(cacheWriteFailed), got \(latest)")
            return
        }
        #expect(underlying as? TestError == TestError("disk full"))
        #expect(fixture.cache.value == Self.base)
        recorder.cancel()
    }

    @Test func anUnreadableCacheFailsThePageWithCacheReadFailed() async throws {
        let fixture = PagingFixture(cached: Self.base)
        let (store, recorder) = try await Self.watched(fixture)
        fixture.cache.failReads(with: TestError("corrupt"))
        await store.requestNextData()
        #expect(fixture.nextOrigin.callCount == 0)
        let latest = try await recorder.waitForLatest { $0.isCompleted && !$0.isNextFixed }
        guard case .completed(_, .error(let error), _) = latest,
            case StoreFlowableError.cacheReadFailed(let underlying) = error
        else {
            Issue.record("expected next: .error(cacheReadFailed), got \(latest)")
            return
        }
        #expect(underlying as? TestError == TestError("corrupt"))
        recorder.cancel()
    }

    @Test func aCacheEmptiedBehindTheStoresBackFailsTheMergeWithNoValidCache() async throws {
        // A cache written elsewhere (`cacheHasOtherWriters`): every merge reads it again.
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: nil))
        fixture.nextOrigin.hold()
        let store = SharedCacheCallback(base: fixture.callback).create()
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.content == [10, 11] && $0.isCompleted }
        let request = Task { await store.requestNextData() }
        await fixture.nextOrigin.waitForCalls(1)
        fixture.cache.value = nil
        fixture.nextOrigin.release()
        _ = await request.valueOrCancel
        let latest = try await recorder.waitForLatest { $0.isCompleted && !$0.isNextFixed && !$0.isNextLoading }
        guard case .completed(_, .error(StoreFlowableError.noValidCache), _) = latest else {
            Issue.record("expected next: .error(noValidCache), got \(latest)")
            return
        }
        #expect(fixture.cache.value == nil)
        recorder.cancel()
    }

    @Test func aFailedRefreshMakesPageRequestsDoNothingUntilTheDataIsSettled() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.origin.enqueue(error: TestError("offline"))
        let (store, recorder) = try await Self.watched(fixture)
        await store.refresh()
        try await recorder.waitForLatest { $0.snapshot == .error([10, 11], "offline") }
        await store.requestNextData()
        await store.requestPrevData()
        #expect(fixture.nextOrigin.callCount == 0)
        #expect(fixture.prevOrigin.callCount == 0)
        // A successful refresh settles the data; paging continues from the new first page.
        fixture.origin.enqueue(value: PagedData(data: [1], nextCursor: 2, prevCursor: nil))
        await store.refresh()
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [2], cursor: nil))
        await store.requestNextData()
        try await recorder.waitForLatest { $0.snapshot == .completed([1, 2]) }
        recorder.cancel()
    }
}

extension LoadingState {
    /// Whether the state is completed with its next direction `.fixed`.
    var isNextFixed: Bool {
        if case .completed(_, .fixed, _) = self { return true }
        return false
    }

    /// Whether the state is completed with its next direction `.loading`.
    var isNextLoading: Bool {
        if case .completed(_, .loading, _) = self { return true }
        return false
    }
}
