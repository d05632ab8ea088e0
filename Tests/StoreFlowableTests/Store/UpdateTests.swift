import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promises 3, 5 and 6: `update` wins, `clear` keeps subscribers, nothing stays loading.
@Suite(.timeLimit(.minutes(1)))
struct UpdateTests {
    @Test func updateReachesTheCacheAndEverySubscriber() async throws {
        let fixture = StoreFixture(cached: "valid")
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        await fixture.store.update(newData: "updated")
        #expect(fixture.cache.value == "updated")
        try await recorder.waitForLatest { $0.content == "updated" }
        #expect(recorder.snapshots.last == .completed("updated"))
        recorder.cancel()
    }

    @Test func updateSupersedesAFetchStillCallingTheOrigin() async throws {
        let fixture = StoreFixture(origin: [.success("from-origin")])
        fixture.origin.hold()
        let store = fixture.store
        let waiter = Task { try await store.requireData(from: .origin) }
        await fixture.origin.waitForCalls(1)
        await store.update(newData: "updated")
        // The superseded fetch is cancelled, and its waiter receives the update.
        await fixture.origin.waitForCancellations(1)
        #expect(try await waiter.value == "updated")
        fixture.origin.release()
        #expect(fixture.cache.value == "updated")
        #expect(fixture.cache.writes == ["updated"])
        #expect(await store.dataState().isLoading == false)
    }

    @Test func updateDuringAFetchSaveWritesAfterItSoTheUpdateWins() async throws {
        let fixture = StoreFixture(origin: [.success("from-origin")])
        let store = fixture.store
        fixture.cache.holdWrites()
        let fetch = Task { try await store.requireData(from: .origin) }
        await fixture.cache.waitForWriteAttempts(1)  // the fetch is writing its result
        let update = Task { await store.update(newData: "updated") }
        await eventually { await fixture.manager.writeQueueLength(for: "key", String.self) == 1 }
        fixture.cache.releaseWrites()
        await update.value
        #expect(try await fetch.value == "from-origin")
        #expect(fixture.cache.writes == ["from-origin", "updated"])
        #expect(fixture.cache.value == "updated")
    }

    @Test func concurrentUpdatesLeaveTheCacheAndSubscribersOnTheSameValue() async throws {
        let fixture = StoreFixture(cached: "valid")
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        let store = fixture.store
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask { await store.update(newData: "value-\(index)") }
            }
        }
        let final = try #require(fixture.cache.value)
        try await recorder.waitForLatest { $0.content == final }
        #expect(fixture.cache.writes.last == final)
        #expect(fixture.cache.writeCount == 200)
        recorder.cancel()
    }

    @Test(arguments: [true, false])
    func clearingWithSubscribersFetchesForThem(useClear: Bool) async throws {
        let fixture = StoreFixture(cached: "valid", origin: [.success("fresh")])
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.origin.hold()
        if useClear {
            await fixture.store.clear()
        } else {
            await fixture.store.update(newData: nil)
        }
        try await recorder.waitForLatest { $0.isLoadingState }
        #expect(await fixture.store.dataState().isLoading)
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(recorder.snapshots == [.completed("valid"), .loading(nil), .completed("fresh")])
        #expect(fixture.cache.value == "fresh")
        recorder.cancel()
    }

    @Test func clearWithoutSubscribersDeletesTheCacheAndForgetsTheKey() async throws {
        let fixture = StoreFixture(cached: "valid", origin: [.failure(TestError("offline"))])
        await fixture.store.refresh()
        #expect(await fixture.manager.trackedKeyCount == 1)  // the error is remembered
        await fixture.store.clear()
        #expect(fixture.cache.value == nil)
        #expect(fixture.origin.callCount == 1)
        #expect(await fixture.manager.trackedKeyCount == 0)
        #expect(await fixture.store.dataState().rawError == nil)
    }

    @Test func updateResolvesAnEarlierErrorForSubscribers() async throws {
        let fixture = StoreFixture(cached: "stale", origin: [.failure(TestError("offline"))])
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isError }
        await fixture.store.update(newData: "manual")
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(recorder.latest?.content == "manual")
        #expect(await fixture.store.dataState().rawError == nil)
        recorder.cancel()
    }

    /// A callback whose cache write honours cancellation, as a file or database write would.
    struct CancellationAwareCallback: StoreFlowableCallback {
        let key = "key"
        let flowableDataStateManager = FlowableDataStateManager<String>()
        let cache = InMemoryCache<String>("valid")

        func loadDataFromCache() async throws -> String? { try await cache.load() }
        func saveDataToCache(newData: String?) async throws {
            try Task.checkCancellation()
            try await cache.save(newData)
        }
        func fetchDataFromOrigin() async throws -> String { "fresh" }
        func needRefresh(cachedData: String) async -> Bool { false }
    }

    @Test func anUpdateFromACancelledTaskStillWrites() async throws {
        let callback = CancellationAwareCallback()
        let store = callback.create()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await store.update(newData: "updated")
        }
        await task.value
        #expect(callback.cache.value == "updated")
        #expect(await store.dataState().rawError == nil)
    }
}
