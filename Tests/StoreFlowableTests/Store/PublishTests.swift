import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promise 2: what `publish()` emits, in order, for every cache situation.
@Suite(.timeLimit(.minutes(1)))
struct PublishTests {
    @Test func emptyCacheEmitsLoadingWithoutContentThenCompleted() async throws {
        let fixture = StoreFixture(origin: [.success("fresh")])
        fixture.origin.hold()
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isLoadingState }
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(recorder.snapshots == [.loading(nil), .completed("fresh")])
        #expect(fixture.cache.value == "fresh")
        #expect(fixture.origin.callCount == 1)
        recorder.cancel()
    }

    @Test func validCacheEmitsOneCompletedAndNeverFetches() async throws {
        let fixture = StoreFixture(cached: "valid")
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(await fixture.store.dataState().isLoading == false)
        #expect(fixture.origin.callCount == 0)
        // Any emission between the first completed state and this update would show in the sequence.
        await fixture.store.update(newData: "next")
        try await recorder.waitForLatest { $0.content == "next" }
        #expect(recorder.snapshots == [.completed("valid"), .completed("next")])
        #expect(fixture.origin.callCount == 0)
        recorder.cancel()
    }

    @Test func staleCacheEmitsLoadingWithStaleContentNotCompletedFirst() async throws {
        let fixture = StoreFixture(cached: "stale", origin: [.success("fresh")])
        fixture.origin.hold()
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isLoadingState }
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(recorder.snapshots == [.loading("stale"), .completed("fresh")])
        recorder.cancel()
    }

    @Test func forceRefreshFetchesEvenWhenTheCacheIsValid() async throws {
        let fixture = StoreFixture(cached: "valid", origin: [.success("fresh")])
        fixture.origin.hold()
        let recorder = StateRecorder(fixture.store.publish(forceRefresh: true))
        try await recorder.waitForLatest { $0.isLoadingState }
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(recorder.snapshots == [.loading("valid"), .completed("fresh")])
        #expect(fixture.origin.callCount == 1)
        recorder.cancel()
    }

    @Test func failedFetchEmitsErrorWithTheStaleContent() async throws {
        let fixture = StoreFixture(cached: "stale", origin: [.failure(TestError("offline"))])
        fixture.origin.hold()
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isLoadingState }
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isError }
        #expect(recorder.snapshots == [.loading("stale"), .error("stale", "offline")])
        #expect(fixture.cache.value == "stale")
        #expect(await fixture.store.dataState().rawError as? TestError == TestError("offline"))
        recorder.cancel()
    }

    @Test func subscribersOfOneKeyShareOneFetchAndSeeTheSameStates() async throws {
        let fixture = StoreFixture(origin: [.success("fresh")])
        fixture.origin.hold()
        let first = StateRecorder(fixture.store.publish())
        let second = StateRecorder(fixture.store.publish())
        try await first.waitForLatest { $0.isLoadingState }
        try await second.waitForLatest { $0.isLoadingState }
        fixture.origin.release()
        try await first.waitForLatest { $0.isCompleted }
        try await second.waitForLatest { $0.isCompleted }
        #expect(first.snapshots == [.loading(nil), .completed("fresh")])
        #expect(second.snapshots == [.loading(nil), .completed("fresh")])
        #expect(fixture.origin.callCount == 1)
        first.cancel()
        second.cancel()
    }

    @Test func aRememberedErrorIsShownToNewSubscribersWithoutRefetchingAValidCache() async throws {
        let fixture = StoreFixture(cached: "valid", origin: [.failure(TestError("offline"))])
        await fixture.store.refresh()
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isError }
        #expect(recorder.snapshots == [.error("valid", "offline")])
        #expect(fixture.origin.callCount == 1)
        recorder.cancel()
    }

    @Test func aRememberedErrorWithAStaleCacheRetriesForNewSubscribers() async throws {
        let fixture = StoreFixture(
            cached: "stale", origin: [.failure(TestError("offline")), .success("fresh")])
        await fixture.store.validate()
        #expect(await fixture.store.dataState().rawError != nil)
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(recorder.latest?.content == "fresh")
        #expect(fixture.origin.callCount == 2)
        recorder.cancel()
    }

    @Test func cancellingTheConsumerReleasesTheSubscriptionAndTheKey() async throws {
        let fixture = StoreFixture(cached: "valid")
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(await fixture.registry().subscribers == 1)
        recorder.cancel()
        await recorder.finished()
        await fixture.waitUntilReleased()
        #expect(await fixture.registry().subscribers == 0)
    }

    @Test func leavingTheLoopReleasesTheSubscriptionAndTheKey() async throws {
        let fixture = StoreFixture(cached: "valid")
        for await state in fixture.store.publish() where state.isCompleted {
            break
        }
        await fixture.waitUntilReleased()
        #expect(await fixture.registry() == (0, 0))
    }

    @Test func aStreamCancelledBeforeItsFirstStateIsNeverLeftRegistered() async throws {
        let fixture = StoreFixture(origin: [])
        fixture.origin.hold()
        for _ in 0..<200 {
            let task = Task {
                for await _ in fixture.store.publish() {}
            }
            task.cancel()
            await task.value
        }
        await fixture.waitUntilReleased()
        #expect(await fixture.registry() == (0, 0))
        fixture.origin.release()
    }
}
