import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Whether `state` is completed with exactly `content`.
private func isCompleted<Item: Equatable>(_ state: LoadingState<[Item]>, with content: [Item]) -> Bool {
    state.isCompleted && state.content == content
}

/// The next and previous directions of a completed state; `nil` for any other state.
private func directions<Content>(_ state: LoadingState<Content>) -> (
    next: AdditionalLoadingState, prev: AdditionalLoadingState
)? {
    guard case .completed(_, let next, let prev) = state else { return nil }
    return (next, prev)
}

@Suite(.timeLimit(.minutes(1)))
struct ListAPIPagingTests {
    // MARK: Page numbers, one way

    @Test func pagesThroughA95ItemListWithOneRequestPerPage() async throws {
        let api = PageNumberListAPI(items: Array(1...95), pageSize: 10)
        let cache = InMemoryCache<PagedData<[Int], Int>>()
        let manager = FlowableDataStateManager<String>()
        let store = PageNumberListCallback(key: "feed", manager: manager, api: api, cache: cache).create()
        let recorder = StateRecorder(store.publish())

        var expectedCount = 10
        var latest = try await recorder.waitForLatest { isCompleted($0, with: Array(1...10)) }
        while let (next, prev) = directions(latest), next.canRequestAdditionalData {
            #expect(!prev.canRequestAdditionalData)
            guard api.requestCount < 10 else {
                Issue.record("more than 10 page requests; requested \(api.requestedPages)")
                break
            }
            await store.requestNextData()
            expectedCount = min(95, expectedCount + 10)
            let expected = Array(1...expectedCount)
            latest = try await recorder.waitForLatest { isCompleted($0, with: expected) }
        }

        let items = try #require(latest.content)
        #expect(items == Array(1...95))
        #expect(Set(items).count == 95)
        #expect(latest.snapshot == .completed(Array(1...95)))
        #expect(api.requestCount == 10)
        #expect(api.requestedPages == Array(0...9))
        #expect(api.maxConcurrentRequests == 1)
        #expect(cache.value == PagedData(data: Array(1...95), nextCursor: nil))

        await store.requestNextData()
        await store.requestNextData(continueWhenError: false)
        #expect(api.requestCount == 10)
        #expect(try await store.requireData() == Array(1...95))
        #expect(api.requestCount == 10)
        recorder.cancel()
        await eventually { await manager.trackedKeyCount == 0 }
    }

    @Test func aListOfExactlyThreeFullPagesStopsWithoutAskingForAnEmptyPage() async throws {
        let api = PageNumberListAPI(items: Array(1...30), pageSize: 10)
        let store = PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api).create()
        #expect(try await store.requireData() == Array(1...10))
        await store.requestNextData()
        await store.requestNextData()
        await store.requestNextData()
        #expect(try await store.requireData() == Array(1...30))
        #expect(api.requestedPages == [0, 1, 2])
    }

    @Test func aFailedPageIsReportedAndRetried() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        let store = PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api).create()
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { isCompleted($0, with: Array(1...10)) }

        api.failNextRequests(1, with: TestError("offline"))
        await store.requestNextData()
        try await recorder.waitForLatest {
            $0.snapshot == .completedPaging(Array(1...10), next: .error("offline"), prev: .noMoreData)
        }
        await store.requestNextData(continueWhenError: false)
        #expect(api.requestedPages == [0, 1])

        await store.requestNextData()
        try await recorder.waitForLatest { isCompleted($0, with: Array(1...20)) }
        #expect(api.requestedPages == [0, 1, 1])
        recorder.cancel()
    }

    @Test func aListThatShrankOnTheServerFailsTheNextPageUntilRefreshed() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        let store = PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api).create()
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { isCompleted($0, with: Array(1...10)) }

        api.items = Array(1...8)
        await store.requestNextData()
        let outOfRange = PageNumberListAPIError.pageOutOfRange(page: 1, pageCount: 1)
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging(Array(1...10), next: .error(String(describing: outOfRange)), prev: .noMoreData)
        }
        let failed = try #require(recorder.latest.flatMap(directions)?.next.rawError)
        #expect(failed as? PageNumberListAPIError == outOfRange)

        await store.refresh()
        try await recorder.waitForLatest { $0.snapshot == .completed(Array(1...8)) }
        #expect(api.requestedPages == [0, 1, 0])
        recorder.cancel()
    }

    @Test func concurrentNextRequestsShareOnePageRequest() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        let manager = FlowableDataStateManager<String>()
        let store = PageNumberListCallback(key: "feed", manager: manager, api: api).create()
        #expect(try await store.requireData() == Array(1...10))
        api.hold()
        let callers = (0..<3).map { _ in Task { await store.requestNextData() } }
        await api.waitForRequests(2)
        await eventually { await manager.pageWaiterCount(for: "feed", PagedData<[Int], Int>.self, .next) == 3 }
        #expect(api.waitingAtGateCount == 1)
        api.release()
        for caller in callers { _ = await caller.value }
        #expect(api.requestedPages == [0, 1])
        #expect(api.maxConcurrentRequests == 1)
        #expect(try await store.requireData() == Array(1...20))
    }

    @Test func leavingAHeldPageRequestCancelsIt() async throws {
        let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
        let cache = InMemoryCache<PagedData<[Int], Int>>()
        let store = PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api, cache: cache)
            .create()
        #expect(try await store.requireData() == Array(1...10))
        api.hold()
        let caller = Task { await store.requestNextData() }
        await api.waitForRequests(2)
        caller.cancel()
        await api.waitForCancellations(1)
        _ = await caller.value
        #expect(api.cancelledCount == 1)
        #expect(cache.value == PagedData(data: Array(1...10), nextCursor: 1))

        api.release()
        await store.requestNextData()
        #expect(cache.value == PagedData(data: Array(1...20), nextCursor: 2))
        #expect(api.requestedPages == [0, 1, 1])
    }

    @Test func refreshStartsAgainFromTheFirstPage() async throws {
        let api = PageNumberListAPI(items: Array(1...95), pageSize: 10)
        let cache = InMemoryCache<PagedData<[Int], Int>>()
        let store = PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api, cache: cache)
            .create()
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { isCompleted($0, with: Array(1...10)) }
        await store.requestNextData()
        await store.requestNextData()
        try await recorder.waitForLatest { isCompleted($0, with: Array(1...30)) }

        api.items = Array(101...195)
        await store.refresh()
        try await recorder.waitForLatest { isCompleted($0, with: Array(101...110)) }
        #expect(cache.value == PagedData(data: Array(101...110), nextCursor: 1))
        #expect(api.requestedPages == [0, 1, 2, 0])

        await store.requestNextData()
        try await recorder.waitForLatest { isCompleted($0, with: Array(101...120)) }
        #expect(api.requestedPages == [0, 1, 2, 0, 1])
        recorder.cancel()
    }

    // MARK: Chat history, two ways

    @Test func chatHistoryLoadsOlderPagesThenPicksUpNewMessages() async throws {
        let api = CursorListAPI(items: (1...35).map { "m\($0)" }, pageSize: 10)
        let cache = InMemoryCache<PagedData<[String], ListCursor>>()
        let manager = FlowableDataStateManager<String>()
        let store = ChatHistoryCallback(key: "room", manager: manager, api: api, cache: cache).create()
        let recorder = StateRecorder(store.publish())
        let messages: @Sendable (ClosedRange<Int>) -> [String] = { range in range.map { "m\($0)" } }

        var latest = try await recorder.waitForLatest { isCompleted($0, with: messages(26...35)) }
        #expect(directions(latest)?.next.canRequestAdditionalData == true)
        #expect(directions(latest)?.prev.canRequestAdditionalData == true)

        await store.requestPrevData()
        try await recorder.waitForLatest { isCompleted($0, with: messages(16...35)) }
        await store.requestPrevData()
        try await recorder.waitForLatest { isCompleted($0, with: messages(6...35)) }
        await store.requestPrevData()
        latest = try await recorder.waitForLatest { isCompleted($0, with: messages(1...35)) }
        #expect(directions(latest)?.prev.canRequestAdditionalData == false)
        #expect(directions(latest)?.next.canRequestAdditionalData == true)
        await store.requestPrevData()
        #expect(api.requestCount == 4)

        await store.requestNextData()
        #expect(cache.value?.data == messages(1...35))
        #expect(api.requestCount == 5)

        api.append(contentsOf: messages(36...38))
        await store.requestNextData()
        latest = try await recorder.waitForLatest { isCompleted($0, with: messages(1...38)) }
        #expect(directions(latest)?.next.canRequestAdditionalData == true)
        #expect(directions(latest)?.prev.canRequestAdditionalData == false)

        let requests = api.requests
        #expect(requests.count == 6)
        #expect(requests.first == .latest)
        #expect(requests[1...3].allSatisfy { if case .older = $0 { true } else { false } })
        #expect(requests[4...].allSatisfy { if case .newer = $0 { true } else { false } })
        #expect(requests[4] == requests[5])
        recorder.cancel()
        await eventually { await manager.trackedKeyCount == 0 }
    }

    @Test func anArchivedChatReportsNoNewerPage() async throws {
        let api = CursorListAPI(items: Array(1...15), pageSize: 10, isLive: false)
        let store = ChatHistoryCallback(key: "room", manager: FlowableDataStateManager(), api: api).create()
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging(Array(6...15), next: .noMoreData, prev: .fixed(canRequestAdditionalData: true))
        }
        await store.requestNextData()
        #expect(api.requests == [.latest])
        await store.requestPrevData()
        try await recorder.waitForLatest { $0.snapshot == .completed(Array(1...15)) }
        recorder.cancel()
    }

    @Test func olderAndNewerPagesLoadAtTheSameTime() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10)
        let cache = InMemoryCache<PagedData<[Int], ListCursor>>()
        let store = ChatHistoryCallback(key: "room", manager: FlowableDataStateManager(), api: api, cache: cache)
            .create()
        #expect(try await store.requireData() == Array(16...25))
        api.hold()
        let older = Task { await store.requestPrevData() }
        let newer = Task { await store.requestNextData() }
        await api.waitForRequests(3)
        #expect(api.waitingAtGateCount == 2)
        api.append(contentsOf: [26, 27])
        api.release()
        _ = await older.value
        _ = await newer.value
        #expect(cache.value?.data == Array(6...27))
        #expect(api.maxConcurrentRequests == 2)
    }

    @Test func refreshReloadsTheLatestPageOfTheChat() async throws {
        let api = CursorListAPI(items: Array(1...35), pageSize: 10)
        let cache = InMemoryCache<PagedData<[Int], ListCursor>>()
        let store = ChatHistoryCallback(key: "room", manager: FlowableDataStateManager(), api: api, cache: cache)
            .create()
        #expect(try await store.requireData() == Array(26...35))
        await store.requestPrevData()
        await store.requestPrevData()
        #expect(cache.value?.data == Array(6...35))

        api.append(contentsOf: Array(36...40))
        await store.refresh()
        #expect(cache.value?.data == Array(31...40))
        await store.requestPrevData()
        #expect(cache.value?.data == Array(21...40))
        #expect(api.requests.filter { $0 == .latest }.count == 2)
    }
}
