@testable import StoreFlowable
import StoreFlowableTesting
import Testing

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
}
