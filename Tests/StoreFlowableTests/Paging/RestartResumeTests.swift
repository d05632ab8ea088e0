import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Tests that simulate a process restart: every store, callback and `FlowableDataStateManager` of
/// the first "process" is dropped, and a second one starts over the same ``PersistentPagedCache`` and
/// the same server.
@Suite(.timeLimit(.minutes(1)))
struct RestartResumeTests {
    @Test func oneWayPagingResumesAtTheNextPageAfterARestart() async throws {
        let api = PageNumberListAPI(items: Array(1...95), pageSize: 10)
        let disk = PersistentPagedCache<[Int], Int>()

        do {
            let manager = FlowableDataStateManager<String>()
            let store = PageNumberListCallback(key: "feed", manager: manager, api: api, cache: disk).create()
            #expect(try await store.requireData() == Array(1...10))
            await store.requestNextData()
            #expect(try await store.requireData(from: .cache) == Array(1...20))
            await eventually { await manager.trackedKeyCount == 0 }
        }
        #expect(api.requestedPages == [0, 1])
        #expect(try disk.contents() == PagedData(data: Array(1...20), nextCursor: 2))

        let manager = FlowableDataStateManager<String>()
        let store = PageNumberListCallback(key: "feed", manager: manager, api: api, cache: disk).create()
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging(Array(1...20), next: .fixed(canRequestAdditionalData: true), prev: .noMoreData)
        }
        #expect(api.requestedPages == [0, 1])

        await store.requestNextData()
        try await recorder.waitForLatest { $0.isCompleted && $0.content == Array(1...30) }
        #expect(api.requestedPages == [0, 1, 2])
        #expect(try disk.contents() == PagedData(data: Array(1...30), nextCursor: 3))
        recorder.cancel()
        await eventually { await manager.trackedKeyCount == 0 }
    }

    @Test func aRestartedProcessResumesWithoutSubscribingFirst() async throws {
        let api = PageNumberListAPI(items: Array(1...95), pageSize: 10)
        let disk = PersistentPagedCache<[Int], Int>()
        do {
            let store = PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api, cache: disk)
                .create()
            _ = try await store.requireData()
            await store.requestNextData()
        }

        let store = PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api, cache: disk)
            .create()
        await store.requestNextData()
        #expect(api.requestedPages == [0, 1, 2])
        #expect(try await store.requireData() == Array(1...30))
        #expect(api.requestCount == 3)
    }

    @Test func aStaleCacheAfterARestartRefreshesFromTheFirstPageInsteadOfResuming() async throws {
        let api = PageNumberListAPI(items: Array(1...95), pageSize: 10)
        let disk = PersistentPagedCache<[Int], Int>()
        do {
            let store = PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api, cache: disk)
                .create()
            _ = try await store.requireData()
            await store.requestNextData()
        }

        api.items = Array(101...195)
        let store = PageNumberListCallback(
            key: "feed", manager: FlowableDataStateManager(), api: api, cache: disk,
            needRefresh: { $0.first == 1 }
        ).create()
        await store.requestNextData()
        #expect(api.requestedPages == [0, 1, 0])
        #expect(try disk.contents() == PagedData(data: Array(101...110), nextCursor: 1))
    }

    @Test func chatHistoryResumesOlderPagingWithThePersistedCursorAfterARestart() async throws {
        let api = CursorListAPI(items: Array(1...50), pageSize: 10)
        let disk = PersistentPagedCache<[Int], ListCursor>()

        do {
            let manager = FlowableDataStateManager<String>()
            let store = ChatHistoryCallback(key: "room", manager: manager, api: api, cache: disk).create()
            #expect(try await store.requireData() == Array(41...50))
            await store.requestPrevData()
            #expect(try await store.requireData(from: .cache) == Array(31...50))
            await eventually { await manager.trackedKeyCount == 0 }
        }
        let persisted = try #require(try disk.contents())
        #expect(persisted.data == Array(31...50))
        let olderCursor = try #require(persisted.prevCursor)
        let newerCursor = try #require(persisted.nextCursor)
        #expect(api.requestCount == 2)

        let manager = FlowableDataStateManager<String>()
        let store = ChatHistoryCallback(key: "room", manager: manager, api: api, cache: disk).create()
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging(
                    Array(31...50), next: .fixed(canRequestAdditionalData: true),
                    prev: .fixed(canRequestAdditionalData: true))
        }

        await store.requestPrevData()
        try await recorder.waitForLatest { $0.isCompleted && $0.content == Array(21...50) }
        #expect(api.requests.count == 3)
        #expect(api.requests.last == .older(olderCursor))

        api.append(contentsOf: [51, 52])
        await store.requestNextData()
        try await recorder.waitForLatest { $0.isCompleted && $0.content == Array(21...52) }
        #expect(api.requests.count == 4)
        #expect(api.requests.last == .newer(newerCursor))
        #expect(!api.requests.dropFirst().contains(.latest))
        #expect(try disk.contents()?.data == Array(21...52))
        recorder.cancel()
        await eventually { await manager.trackedKeyCount == 0 }
    }

    @Test func chatHistoryResumedAfterARestartPagesToTheOldestMessage() async throws {
        let api = CursorListAPI(items: Array(1...25), pageSize: 10)
        let disk = PersistentPagedCache<[Int], ListCursor>()
        do {
            let store = ChatHistoryCallback(key: "room", manager: FlowableDataStateManager(), api: api, cache: disk)
                .create()
            _ = try await store.requireData()
        }

        let store = ChatHistoryCallback(key: "room", manager: FlowableDataStateManager(), api: api, cache: disk)
            .create()
        await store.requestPrevData()
        await store.requestPrevData()
        await store.requestPrevData()
        #expect(try await store.requireData() == Array(1...25))
        #expect(api.requestCount == 3)
        #expect(try disk.contents()?.prevCursor == nil)
    }
}
