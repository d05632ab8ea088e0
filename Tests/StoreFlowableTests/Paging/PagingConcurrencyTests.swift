import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promise 1 (single flight per direction) and promise 7 (cancellation and memory) of paging.
@Suite("Paging: single flight, cancellation, memory", .timeLimit(.minutes(1)))
struct PagingConcurrencyTests {
    static let base = PagedData(data: [10, 11], nextCursor: 12, prevCursor: 9)

    @Test(arguments: PageDirection.allCases)
    func aThousandConcurrentRequestsCauseOnePageFetch(direction: PageDirection) async throws {
        let fixture = PagingFixture(cached: Self.base)
        let origin = direction == .next ? fixture.nextOrigin : fixture.prevOrigin
        origin.enqueue(
            value: direction == .next ? FetchedPage(data: [12], cursor: 13) : FetchedPage(data: [9], cursor: 8))
        origin.hold()
        let store = fixture.store
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<1_000 {
                group.addTask { _ = direction == .next ? await store.requestNextData() : await store.requestPrevData() }
            }
            await eventually {
                await fixture.manager.pageWaiterCount(for: "list", PagingFixture.Record.self, direction) == 1_000
            }
            origin.release()
        }
        #expect(origin.callCount == 1)
        let expected =
            direction == .next
            ? PagedData(data: [10, 11, 12], nextCursor: 13, prevCursor: 9)
            : PagedData(data: [9, 10, 11], nextCursor: 12, prevCursor: 8)
        #expect(fixture.cache.value == expected)
        #expect(fixture.cache.writeCount == 1)
        await fixture.waitUntilReleased()
    }

    @Test func nextAndPrevLoadAtTheSameTimeAndBothAreMerged() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12, 13], cursor: nil))
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [8, 9], cursor: nil))
        fixture.nextOrigin.hold()
        fixture.prevOrigin.hold()
        let store = fixture.store
        let next = Task { await store.requestNextData() }
        let prev = Task { await store.requestPrevData() }
        // Both fetches are in flight at once: neither direction waits for the other.
        await fixture.nextOrigin.waitForCalls(1)
        await fixture.prevOrigin.waitForCalls(1)
        fixture.prevOrigin.release()
        _ = await prev.valueOrCancel
        fixture.nextOrigin.release()
        _ = await next.valueOrCancel
        #expect(fixture.cache.value == PagedData(data: [8, 9, 10, 11, 12, 13], nextCursor: nil, prevCursor: nil))
        await fixture.waitUntilReleased()
    }

    @Test func twoPagesWritingAtOnceTakeTurnsAndEachMergesIntoTheOthersResult() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: nil))
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [9], cursor: nil))
        fixture.cache.holdWrites()
        let store = fixture.store
        let next = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)
        // The previous page returns while the next page is writing: it waits for its turn.
        let prev = Task { await store.requestPrevData() }
        await fixture.prevOrigin.waitForCalls(1)
        await eventually {
            await fixture.manager.writeQueueLength(for: "list", PagingFixture.Record.self) == 1
        }
        #expect(fixture.cache.heldWriteCount == 1)
        fixture.cache.releaseWrites()
        _ = await next.valueOrCancel
        _ = await prev.valueOrCancel
        #expect(fixture.cache.value?.data == [9, 10, 11, 12])
        #expect(fixture.cache.writes.map { $0?.data } == [[10, 11, 12], [9, 10, 11, 12]])
        await fixture.waitUntilReleased()
    }

    @Test func aCancelledRequesterReturnsAndThePageFetchIsCancelledWhenNobodyWaits() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.hold()
        let store = fixture.store
        let request = Task { await store.requestNextData() }
        await fixture.nextOrigin.waitForCalls(1)
        request.cancel()
        _ = await request.valueOrCancel
        // The fetch saw its task cancelled (the origin's gate throws CancellationError then).
        await fixture.nextOrigin.waitForCancellations(1)
        #expect(fixture.cache.writeCount == 0)
        await fixture.waitUntilReleased()
    }

    @Test func aSubscriberKeepsThePageFetchAliveWhenTheRequesterLeaves() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: nil))
        fixture.nextOrigin.hold()
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        let request = Task { await store.requestNextData() }
        await fixture.nextOrigin.waitForCalls(1)
        request.cancel()
        _ = await request.valueOrCancel
        #expect(fixture.nextOrigin.cancelledCount == 0)
        fixture.nextOrigin.release()
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging([10, 11, 12], next: .noMoreData, prev: .fixed(canRequestAdditionalData: true))
        }
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func aNewPageFetchWaitsForTheCancelledOneToReturn() async throws {
        let gate = OneShot<Bool>()
        let callback = StubbornPagingCallback(manager: FlowableDataStateManager(), gate: gate)
        let store = callback.create()
        let first = Task { await store.requestNextData() }
        await callback.counter.waitForCalls(1)
        first.cancel()
        _ = await first.valueOrCancel
        // The cancelled page fetch ignores cancellation and is still running: a new request joins a
        // page flight whose origin call waits for it.
        let second = Task { await store.requestNextData() }
        await eventually {
            await callback.flowableDataStateManager.pageWaiterCount(for: "list", PagingFixture.Record.self, .next)
                == 1
        }
        #expect(callback.counter.callCount == 1)
        gate.resolve(.success(true))
        _ = await second.valueOrCancel
        #expect(callback.counter.callCount == 2)
        #expect(callback.counter.maxConcurrentCalls == 1)
        #expect(callback.cache.value?.data == [10, 11, 2])
        await eventually { await callback.flowableDataStateManager.trackedKeyCount == 0 }
    }

    @Test func pageRequestsLeaveNothingBehind() async throws {
        let fixture = PagingFixture(cached: PagedData(data: [0], nextCursor: 1, prevCursor: nil))
        let store = fixture.oneWayStore
        for page in 1...200 {
            fixture.nextOrigin.enqueue(value: FetchedPage(data: [page], cursor: page + 1))
            await store.requestNextData()
            #expect(await fixture.manager.trackedKeyCount == 0)
        }
        #expect(fixture.cache.value?.data == Array(0...200))
        #expect(fixture.nextOrigin.callCount == 200)
    }

    @Test func aRememberedPageErrorKeepsTheKeyOnlyWithinTheLimit() async throws {
        let manager = FlowableDataStateManager<String>(rememberedErrorLimit: 3)
        for index in 0..<10 {
            let callback = TestPaginationCallback<String, [Int], Int>(
                key: "list-\(index)", manager: manager,
                cache: InMemoryCache(PagedData(data: [0], nextCursor: 1)),
                nextOrigin: ScriptedOrigin([.failure(TestError("page"))]))
            await callback.create().requestNextData()
        }
        #expect(await manager.trackedKeyCount == 3)
    }
}

/// A two-way paged callback whose next-page fetch ignores cancellation until its gate opens; the page
/// is the call number.
private struct StubbornPagingCallback: TwoWayPaginationStoreFlowableCallback {
    let key = "list"
    let flowableDataStateManager: FlowableDataStateManager<String>
    let cache = InMemoryCache(PagedData(data: [10, 11], nextCursor: 12, prevCursor: nil))
    let counter = ScriptedOrigin<Int>(otherwise: { .success($0) })
    let gate: OneShot<Bool>

    init(manager: FlowableDataStateManager<String>, gate: OneShot<Bool>) {
        flowableDataStateManager = manager
        self.gate = gate
    }

    func loadDataFromCache() async throws -> PagedData<[Int], Int>? { try await cache.load() }
    func saveDataToCache(newData: PagedData<[Int], Int>?) async throws { try await cache.save(newData) }
    func fetchDataFromOrigin() async throws -> PagedData<[Int], Int> { PagedData(data: [], nextCursor: nil) }
    func needRefresh(cachedData: [Int]) async -> Bool { false }

    func fetchNextDataFromOrigin(nextCursor: Int, data: [Int]) async throws -> FetchedPage<[Int], Int> {
        let call = try await counter.fetch()
        if call == 1 { _ = try await gate.value(cancellable: false) }
        return FetchedPage(data: [call], cursor: nil)
    }

    func fetchPrevDataFromOrigin(prevCursor: Int, data: [Int]) async throws -> FetchedPage<[Int], Int> {
        FetchedPage(data: [], cursor: nil)
    }
}
