import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// `invalidate()` on a store and `invalidate(where:)`/`invalidateAll()` on a ``KeyedStore``.
@Suite(.timeLimit(.minutes(1)))
struct InvalidationTests {
    @Test func invalidateMarksTheValueStaleWithoutDeletingIt() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1))
        try await fixture.store.invalidate()
        #expect(fixture.cache["key"]?.isInvalidated == true)
        #expect(fixture.cachedValue == "cached")
        #expect(fixture.origin.callCount == 0)  // nobody watches: nothing is fetched yet
        #expect(try await fixture.store.requireData() == "fresh-1")
        #expect(fixture.cache["key"]?.isInvalidated == false)
    }

    @Test func anInvalidatedValueStandsInForAFailingOriginInsideTheStaleIfErrorWindow() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1), origin: [.failure(TestError("down"))])
        try await fixture.store.invalidate()
        #expect(try await fixture.store.requireData() == "cached")
        // It is not served from the cache alone, fresh or not.
        await #expect(throws: StoreFlowableError.self) { try await fixture.store.requireData(from: .cache) }
    }

    @Test func subscribersGetARefetchAndKeepTheirContent() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1))
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.origin.hold()
        try await fixture.store.invalidate()
        try await recorder.waitForLatest { $0.isLoading }
        #expect(recorder.latest?.content == "cached")
        fixture.origin.release()
        let latest = try await recorder.waitForLatest { $0.isCompleted }
        #expect(latest.content == "fresh-1")
        recorder.cancel()
    }

    @Test func aSubscriberKeepsItsContentWhenTheRefetchFails() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1), origin: [.failure(TestError("down"))])
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        try await fixture.store.invalidate()
        let latest = try await recorder.waitForLatest { $0.isError }
        #expect(latest.content == "cached")
        recorder.cancel()
    }

    @Test func aFetchThatBeganBeforeTheInvalidationIsFetchedAgain() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(40))
        fixture.origin.hold()
        let caller = Task { try await fixture.store.requireData() }
        await fixture.origin.waitForCalls(1)
        try await fixture.store.invalidate()
        // The first call is cancelled; the caller is served by a fetch that began after the invalidation.
        await fixture.origin.waitForCancellations(1)
        fixture.origin.release()
        #expect(try await caller.value == "fresh-2")
        #expect(fixture.cache["key"] == CacheEntry(value: "fresh-2", storedAt: fixture.clock.now))
    }

    @Test func aFetchAlreadyWritingIsMarkedStaleOnceItHasWritten() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(40))
        fixture.cache.holdWrites()
        let caller = Task { try await fixture.store.requireData() }
        await fixture.cache.waitForWriteAttempts(1)
        let invalidation = Task { try await fixture.store.invalidate() }
        await eventually { await fixture.stores.manager.writeQueueLength(for: "key", String.self) == 1 }
        fixture.cache.releaseWrites()
        #expect(try await caller.value == "fresh-1")
        try await invalidation.value
        // The value fetched before the invalidation is cached, but never as fresh.
        #expect(fixture.cache["key"]?.value == "fresh-1")
        #expect(fixture.cache["key"]?.isInvalidated == true)
        #expect(try await fixture.store.requireData() == "fresh-2")
    }

    @Test func anUpdateAfterTheInvalidationIsFresh() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1))
        try await fixture.store.invalidate()
        await fixture.store.update(newData: "edited")
        #expect(fixture.cache["key"]?.isInvalidated == false)
        #expect(try await fixture.store.requireData() == "edited")
        #expect(fixture.origin.callCount == 0)
    }

    @Test func aFailedMarkIsReportedAndSubscribersAreStillRefetched() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1))
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.cache.failWrites(with: TestError("read-only"))
        await #expect(throws: StoreFlowableError.self) { try await fixture.store.invalidate() }
        await fixture.origin.waitForCalls(1)
        recorder.cancel()
    }

    @Test func invalidatingAnUntrackedKeyIsRememberedInTheCache() async throws {
        let fixture = FreshnessFixture()
        fixture.cache.insert("one", forKey: "a")
        fixture.cache.insert("two", forKey: "b")
        try await fixture.stores.invalidate(where: { $0 == "a" })
        #expect(fixture.cache["a"]?.isInvalidated == true)
        #expect(fixture.cache["b"]?.isInvalidated == false)
        #expect(try await fixture.stores["a"].requireData() == "fresh-1")
        #expect(try await fixture.stores["b"].requireData() == "two")
    }

    @Test func invalidateAllMarksEveryKeyAndRefetchesWatchedOnes() async throws {
        let fixture = FreshnessFixture()
        for key in ["a", "b", "c"] { fixture.cache.insert("old-\(key)", forKey: key) }
        let recorder = StateRecorder(fixture.stores["a"].publish())
        try await recorder.waitForLatest { $0.isCompleted }
        try await fixture.stores.invalidateAll()
        #expect(fixture.cache.entries.values.filter(\.isInvalidated).count >= 2)
        let latest = try await recorder.waitForLatest { $0.isCompleted && $0.content == "fresh-1" }
        #expect(latest.content == "fresh-1")
        #expect(fixture.cache["b"]?.isInvalidated == true)
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    @Test func theManagerInvalidatesTheTrackedKeysOfAHandWrittenCallbackInOneCall() async throws {
        let fixture = StoreFixture(cached: "cached")
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        try await fixture.manager.invalidate(where: { $0 != "key" }) { _ in fixture.store }
        #expect(fixture.origin.callCount == 0)
        try await fixture.manager.invalidate(where: { _ in true }) { _ in fixture.store }
        let latest = try await recorder.waitForLatest { $0.isCompleted && $0.content == "fresh-1" }
        #expect(latest.content == "fresh-1")
        recorder.cancel()
    }

    @Test func invalidateFromInsideTheKeysOwnWriteIsRefused() async throws {
        let manager = FlowableDataStateManager<String>()
        let seen = LockedValue<(any Error)?>(nil)
        let callback = ReentrantSaveCallback(manager: manager, seen: seen)
        await callback.create().update(newData: "x")
        #expect(seen.withLock { $0 } is StoreFlowableError)
    }
}

/// A callback whose save invalidates its own key.
private struct ReentrantSaveCallback: StoreFlowableCallback {
    let key = "key"
    let manager: FlowableDataStateManager<String>
    let seen: LockedValue<(any Error)?>
    var flowableDataStateManager: FlowableDataStateManager<String> { manager }
    func loadDataFromCache() async throws -> String? { nil }
    func saveDataToCache(newData: String?) async throws {
        do {
            try await create().invalidate()
        } catch {
            seen.withLock { $0 = error }
        }
    }
    func fetchDataFromOrigin() async throws -> String { "fetched" }
    func needRefresh(cachedData: String) async -> Bool { false }
}
