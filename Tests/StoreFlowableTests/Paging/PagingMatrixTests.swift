import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// The full state matrix of a page request: which direction is requested, the state of each direction
/// before (more pages, no more pages, loading, failed), the cache (empty, valid, stale), and whether
/// the fetch the request causes succeeds. Each case checks the states `publish()` shows, the cache,
/// and how many fetches each origin saw.
@Suite("Paging: state matrix", .timeLimit(.minutes(2)))
struct PagingMatrixTests {
    enum Start: CaseIterable, CustomStringConvertible {
        case more, noMore, loading, failed
        var description: String {
            "\(self == .more ? "more" : self == .noMore ? "noMore" : self == .loading ? "loading" : "failed")"
        }
    }

    enum Cache: CaseIterable { case empty, valid, stale }

    static let cases: [(PageDirection, Start, Start, Cache, Bool)] = PageDirection.allCases.flatMap { direction in
        Start.allCases.flatMap { requested in
            Start.allCases.flatMap { other in
                Cache.allCases.flatMap { cache in [true, false].map { (direction, requested, other, cache, $0) } }
            }
        }
    }

    @Test(arguments: cases)
    func pageRequest(
        direction: PageDirection, requested: Start, other: Start, cache: Cache, succeeds: Bool
    ) async throws {
        let scenario = try await Scenario(direction: direction, requested: requested, other: other)
        let before = try #require(scenario.recorder.latest?.snapshot)
        let fetchesBefore = scenario.fetchCounts

        switch cache {
        case .empty: scenario.fixture.cache.value = nil
        case .stale: scenario.stale.withLock { $0 = true }
        case .valid: break
        }
        let expectsRefresh = cache == .stale && requested != .noMore
        let expectsPage = cache == .valid && requested != .noMore
        if expectsRefresh {
            scenario.fixture.origin.enqueue(
                succeeds
                    ? .success(PagedData(data: [1, 2], nextCursor: 3, prevCursor: 0)) : .failure(TestError("refresh")))
        }
        if expectsPage {
            scenario.origin(direction).enqueue(
                succeeds ? .success(Scenario.page(direction)) : .failure(TestError("page")))
        }

        let request = Task { await scenario.request(direction) }
        if expectsPage, requested == .loading {
            // Let the held fetch through only once this request has joined it.
            await eventually {
                await scenario.fixture.manager.pageWaiterCount(for: "list", Scenario.Record.self, direction) == 2
            }
            scenario.origin(direction).release()
        }
        await request.valueOrCancel

        let counts = scenario.fetchCounts
        let expected: StateSnapshot<[Int]>
        if expectsRefresh {
            #expect(counts.first == fetchesBefore.first + 1)
            #expect(counts.pages == fetchesBefore.pages)
            expected =
                succeeds
                ? .completedPaging(
                    [1, 2], next: .fixed(canRequestAdditionalData: true), prev: .fixed(canRequestAdditionalData: true))
                : .error([10, 11], "refresh")
        } else if expectsPage {
            #expect(counts.first == fetchesBefore.first)
            // A request joining a page in flight causes no fetch of its own.
            let added = requested == .loading ? 0 : 1
            #expect(counts.page(direction) == fetchesBefore.page(direction) + added)
            #expect(counts.page(direction.opposite) == fetchesBefore.page(direction.opposite))
            expected = scenario.expectedAfterPage(direction, succeeds: succeeds)
        } else {
            #expect(counts.first == fetchesBefore.first)
            #expect(counts.pages == fetchesBefore.pages)
            expected = before
        }
        let latest = try await scenario.recorder.waitForLatest { $0.snapshot == expected }
        #expect(latest.snapshot == expected)
        if expectsPage, succeeds {
            #expect(scenario.fixture.cache.value == scenario.expectedRecord(direction))
        }
        await scenario.finish()
    }
}

extension PageDirection {
    var opposite: PageDirection { self == .next ? .prev : .next }
}

/// A two-way store over `[10, 11]` with its two directions put into the requested start states, and
/// a `publish()` stream watching it.
private struct Scenario {
    typealias Record = PagedData<[Int], Int>

    let fixture: PagingFixture
    let stale: LockedValue<Bool>
    let store: AnyTwoWayPaginationStoreFlowable<[Int], Int>
    let recorder: StateRecorder<[Int]>
    let starts: [PageDirection: PagingMatrixTests.Start]
    private var background: [Task<Void, Never>] = []

    init(direction: PageDirection, requested: PagingMatrixTests.Start, other: PagingMatrixTests.Start) async throws {
        starts = [direction: requested, direction.opposite: other]
        let stale = LockedValue(false)
        self.stale = stale
        let record = Record(
            data: [10, 11], nextCursor: starts[.next] == .noMore ? nil : 12,
            prevCursor: starts[.prev] == .noMore ? nil : 9)
        let manager = FlowableDataStateManager<String>()
        let callback = TestPaginationCallback<String, [Int], Int>(
            key: "list", manager: manager, cache: InMemoryCache(record), needRefresh: { _ in stale.withLock { $0 } })
        fixture = PagingFixture(callback: callback)
        store = callback.create()
        recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.content == [10, 11] }
        let store = store
        for (direction, start) in starts where start == .failed {
            origin(direction).enqueue(error: TestError("setup-\(direction)"))
            await request(direction)
        }
        for (direction, start) in starts where start == .loading {
            let calls = origin(direction).callCount
            origin(direction).hold()
            background.append(Task { _ = await direction == .next ? store.requestNextData() : store.requestPrevData() })
            await origin(direction).waitForCalls(calls + 1)
        }
        let expected = StateSnapshot<[Int]>.completedPaging(
            [10, 11], next: startSnapshot(.next), prev: startSnapshot(.prev))
        try await recorder.waitForLatest { $0.snapshot == expected }
    }

    func startSnapshot(_ direction: PageDirection) -> AdditionalSnapshot {
        switch starts[direction] {
        case .more?: .fixed(canRequestAdditionalData: true)
        case .noMore?, nil: .noMoreData
        case .loading?: .loading
        case .failed?: .error("setup-\(direction)")
        }
    }

    func origin(_ direction: PageDirection) -> ScriptedOrigin<FetchedPage<[Int], Int>> {
        direction == .next ? fixture.nextOrigin : fixture.prevOrigin
    }

    func request(_ direction: PageDirection) async {
        _ = direction == .next ? await store.requestNextData() : await store.requestPrevData()
    }

    static func page(_ direction: PageDirection) -> FetchedPage<[Int], Int> {
        direction == .next ? FetchedPage(data: [20, 21], cursor: 30) : FetchedPage(data: [5, 6], cursor: 3)
    }

    var fetchCounts: FetchCounts {
        FetchCounts(
            first: fixture.origin.callCount, next: fixture.nextOrigin.callCount, prev: fixture.prevOrigin.callCount)
    }

    /// The record after a successful page in `direction`.
    func expectedRecord(_ direction: PageDirection) -> Record {
        let nextCursor = starts[.next] == .noMore ? nil : 12
        let prevCursor = starts[.prev] == .noMore ? nil : 9
        return direction == .next
            ? Record(data: [10, 11, 20, 21], nextCursor: 30, prevCursor: prevCursor)
            : Record(data: [5, 6, 10, 11], nextCursor: nextCursor, prevCursor: 3)
    }

    /// The state after the page in `direction` loaded or failed: the other direction is untouched.
    func expectedAfterPage(_ direction: PageDirection, succeeds: Bool) -> StateSnapshot<[Int]> {
        let content = succeeds ? expectedRecord(direction).data : [10, 11]
        let requested: AdditionalSnapshot = succeeds ? .fixed(canRequestAdditionalData: true) : .error("page")
        let other = startSnapshot(direction.opposite)
        return direction == .next
            ? .completedPaging(content, next: requested, prev: other)
            : .completedPaging(content, next: other, prev: requested)
    }

    /// Lets every held fetch finish and stops watching.
    func finish() async {
        for direction in PageDirection.allCases {
            origin(direction).enqueue(value: FetchedPage(data: [], cursor: nil))
            origin(direction).release()
        }
        for task in background { await task.valueOrCancel }
        recorder.cancel()
        await recorder.finished()
    }
}

/// How many fetches each origin saw.
private struct FetchCounts: Equatable {
    let first: Int
    let next: Int
    let prev: Int

    var pages: [Int] { [next, prev] }

    func page(_ direction: PageDirection) -> Int { direction == .next ? next : prev }
}
