import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// `update(_:)`: an atomic read-modify-write under the key's write turn, for plain and paged stores.
@Suite(.timeLimit(.minutes(1)))
struct TransformUpdateTests {
    @Test func concurrentTransformsAreAllApplied() async throws {
        let fixture = StoreFixture(cached: "")
        let store = fixture.store
        await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask { try await store.update { ($0 ?? "") + "\(index)," } }
            }
        }
        let items = try #require(fixture.cache.value).split(separator: ",").map { Int($0) }
        // "read, then update" would lose most of them; the transform loses none.
        #expect(Set(items) == Set((0..<200).map { Optional($0) }))
        #expect(items.count == 200)
        await fixture.waitUntilReleased()
    }

    @Test func theTransformSeesNilForAnEmptyCacheAndNilDeletes() async throws {
        let fixture = StoreFixture()
        try await fixture.store.update { current in
            #expect(current == nil)
            return "first"
        }
        #expect(fixture.cache.value == "first")
        try await fixture.store.update { _ in nil }
        #expect(fixture.cache.value == nil)
    }

    @Test func aThrowingTransformWritesNothingAndLeavesTheStateAsItWas() async throws {
        let fixture = StoreFixture(cached: "valid")
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        await #expect(throws: TestError.self) {
            try await fixture.store.update { _ in throw TestError("nope") }
        }
        #expect(fixture.cache.writes.isEmpty)
        #expect(await fixture.store.dataState().isLoading == false)
        if case .error = await fixture.store.dataState() { Issue.record("the key's state must not change") }
        #expect(await fixture.store.getData(from: .cache) == "valid")
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func anUnreadableCacheFailsTheTransformWithCacheReadFailed() async throws {
        let fixture = StoreFixture(cached: "valid")
        fixture.cache.failReads(with: TestError("disk"))
        do {
            try await fixture.store.update { _ in "never" }
            Issue.record("expected cacheReadFailed")
        } catch StoreFlowableError.cacheReadFailed(let underlying) {
            #expect(underlying as? TestError == TestError("disk"))
        }
        #expect(fixture.cache.writes.isEmpty)
    }

    @Test func aFailingWriteThrowsCacheWriteFailed() async throws {
        let fixture = StoreFixture(cached: "valid")
        fixture.cache.failWrites(with: TestError("full"))
        await #expect(throws: StoreFlowableError.self) { try await fixture.store.update { _ in "new" } }
    }

    @Test func aFetchDroppedByAThrowingTransformStartsAgainForItsCallers() async throws {
        let fixture = StoreFixture(cached: "stale")
        fixture.origin.hold()
        let caller = Task { try await fixture.store.requireData() }
        await fixture.origin.waitForCalls(1)
        // The transform drops the fetch, then throws: the caller must still get a value.
        await #expect(throws: TestError.self) {
            try await fixture.store.update { _ in throw TestError("nope") }
        }
        fixture.origin.release()
        #expect(try await caller.value.hasPrefix("fresh"))
        #expect(fixture.origin.callCount == 2)
        await fixture.waitUntilReleased()
    }

    @Test func aPagedTransformKeepsTheCursors() async throws {
        let fixture = PagingFixture(cached: PagedData(data: [1, 2], nextCursor: 3, prevCursor: 0))
        try await fixture.store.update { ($0 ?? []) + [99] }
        #expect(fixture.cache.value == PagedData(data: [1, 2, 99], nextCursor: 3, prevCursor: 0))
        try await fixture.oneWayStore.update { $0?.filter { $0 != 1 } }
        #expect(fixture.cache.value == PagedData(data: [2, 99], nextCursor: 3, prevCursor: 0))
    }

    @Test func aTransformFromInsideTheKeysOwnWriteIsRefused() async throws {
        let fixture = StoreFixture()
        let store = fixture.store
        let refused = LockedValue(false)
        let inner = HookedSave(fixture: fixture) {
            do {
                try await store.update { _ in "inner" }
            } catch StoreFlowableError.reentrantCall {
                refused.withLock { $0 = true }
            } catch {
                Issue.record("expected reentrantCall, got \(error)")
            }
        }
        await inner.create().update(newData: "outer")
        #expect(refused.withLock { $0 })
        #expect(fixture.cache.value == "outer")
    }
}

/// A callback over a fixture's cache and origin whose save runs `hook` first.
private struct HookedSave: StoreFlowableCallback {
    let fixture: StoreFixture
    let hook: @Sendable () async -> Void
    var key: String { fixture.callback.key }
    var flowableDataStateManager: FlowableDataStateManager<String> { fixture.manager }
    func loadDataFromCache() async throws -> String? { try await fixture.cache.load() }
    func saveDataToCache(newData: String?) async throws {
        await hook()
        try await fixture.cache.save(newData)
    }
    func fetchDataFromOrigin() async throws -> String { try await fixture.origin.fetch() }
    func needRefresh(cachedData: String) async -> Bool { cachedData.hasPrefix("stale") }
}
