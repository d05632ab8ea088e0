import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promise 7: cancelled callers leave at once, the shared fetch goes on for the others, and a fetch
/// nobody waits for is cancelled.
@Suite(.timeLimit(.minutes(1)))
struct CancellationTests {
    @Test func aCancelledCallerGetsCancellationErrorWhileTheFetchContinuesForOthers() async throws {
        let fixture = StoreFixture(origin: [.success("fresh")])
        fixture.origin.hold()
        let store = fixture.store
        let cancelled = Task { try await store.requireData(from: .origin) }
        let patient = Task { try await store.requireData(from: .origin) }
        await eventually { await fixture.registry().waiters == 2 }
        cancelled.cancel()
        // Answered while the origin is still held: cancellation does not wait for the fetch.
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(await fixture.registry().waiters == 1)
        #expect(fixture.origin.cancelledCount == 0)
        fixture.origin.release()
        #expect(try await patient.value == "fresh")
        #expect(fixture.origin.callCount == 1)
    }

    @Test func theFetchIsCancelledWhenTheLastWaiterLeaves() async throws {
        let fixture = StoreFixture(origin: [])
        fixture.origin.hold()
        let store = fixture.store
        let caller = Task { try await store.requireData() }
        await fixture.origin.waitForCalls(1)
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        await fixture.origin.waitForCancellations(1)
        await fixture.waitUntilReleased()
        #expect(await store.dataState().isLoading == false)
        #expect(fixture.cache.writeCount == 0)
    }

    @Test func theFetchIsCancelledWhenTheLastSubscriberLeaves() async throws {
        let fixture = StoreFixture(origin: [])
        fixture.origin.hold()
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isLoadingState }
        recorder.cancel()
        await fixture.origin.waitForCancellations(1)
        await fixture.waitUntilReleased()
        #expect(fixture.cache.writeCount == 0)
    }

    @Test func aSubscriberKeepsTheFetchAliveWhenTheWaitersLeave() async throws {
        let fixture = StoreFixture(origin: [.success("fresh")])
        fixture.origin.hold()
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isLoadingState }
        let store = fixture.store
        let caller = Task { try await store.requireData(from: .origin) }
        await eventually { await fixture.registry().waiters == 1 }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(fixture.origin.cancelledCount == 0)
        #expect(recorder.latest?.content == "fresh")
        recorder.cancel()
    }

    @Test func anAlreadyCancelledCallerStartsNoFetch() async throws {
        let fixture = StoreFixture(origin: [.success("fresh")])
        let store = fixture.store
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await store.requireData(from: .origin)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(fixture.origin.callCount == 0)
        #expect(await fixture.manager.trackedKeyCount == 0)
    }

    @Test func validateAndRefreshReturnWhenTheirTaskIsCancelled() async throws {
        let fixture = StoreFixture(origin: [])
        fixture.origin.hold()
        let store = fixture.store
        let validate = Task { await store.validate() }
        let refresh = Task { await store.refresh() }
        await eventually { await fixture.registry().waiters == 2 }
        validate.cancel()
        refresh.cancel()
        await validate.value
        await refresh.value
        await fixture.origin.waitForCancellations(1)
        await fixture.waitUntilReleased()
    }

    /// An origin whose calls wait for a gate and ignore cancellation, as a blocking client would.
    struct StubbornCallback: StoreFlowableCallback {
        let key = "key"
        let flowableDataStateManager: FlowableDataStateManager<String>
        let cache: InMemoryCache<String>
        let counter: ScriptedOrigin<String>
        let gate: OneShot<Bool>

        func loadDataFromCache() async throws -> String? { try await cache.load() }
        func saveDataToCache(newData: String?) async throws { try await cache.save(newData) }
        func needRefresh(cachedData: String) async -> Bool { false }
        func fetchDataFromOrigin() async throws -> String {
            let value = try await counter.fetch()
            _ = try await gate.value(cancellable: false)
            return value
        }
    }

    @Test func aNewFetchWaitsForTheCancelledOriginCallToReturn() async throws {
        let callback = StubbornCallback(
            flowableDataStateManager: FlowableDataStateManager(), cache: InMemoryCache(),
            counter: ScriptedOrigin(otherwise: { .success("fresh-\($0)") }), gate: OneShot())
        let store = callback.create()
        let first = Task { try await store.requireData() }
        await callback.counter.waitForCalls(1)
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        // The first origin call is still running: a new caller joins a fetch whose call waits for it.
        let second = Task { try await store.requireData() }
        await eventually {
            await callback.flowableDataStateManager.registryCounts(for: "key", String.self).waiters == 1
        }
        #expect(await store.dataState().isLoading)
        #expect(callback.counter.callCount == 1)
        callback.gate.resolve(.success(true))
        #expect(try await second.value == "fresh-2")
        #expect(callback.counter.callCount == 2)
        #expect(callback.cache.writes == ["fresh-2"])
        await eventually { await callback.flowableDataStateManager.trackedKeyCount == 0 }
    }
}
