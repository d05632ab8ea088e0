import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promise 8: throwing callbacks give documented states and errors, never a crash, hang or lost value.
@Suite(.timeLimit(.minutes(1)))
struct BadCallbackTests {
    @Test func anUnreadableCacheCountsAsAMissForPublishAndGetData() async throws {
        let fixture = StoreFixture(cached: "valid", origin: [.success("fresh")])
        fixture.cache.failReads(with: TestError("disk"))
        fixture.origin.hold()
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isLoadingState }
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(recorder.snapshots == [.loading(nil), .completed("fresh")])
        #expect(await fixture.store.getData() == "fresh-2")  // the read fails again: fetched again
        #expect(fixture.origin.callCount == 2)
        recorder.cancel()
    }

    @Test func anUnreadableCacheThrowsCacheReadFailedForCacheOnlyReads() async throws {
        let fixture = StoreFixture(cached: "valid")
        fixture.cache.failReads(with: TestError("disk"))
        do {
            _ = try await fixture.store.requireData(from: .cache)
            Issue.record("expected cacheReadFailed")
        } catch StoreFlowableError.cacheReadFailed(let underlying) {
            #expect(underlying as? TestError == TestError("disk"))
        }
        #expect(fixture.origin.callCount == 0)
    }

    @Test func aFailingSaveAfterAFetchReportsCacheWriteFailedAndKeepsTheLastGoodValue() async throws {
        let fixture = StoreFixture(cached: "stale", origin: [.success("fresh")])
        fixture.origin.hold()
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isLoadingState }
        fixture.cache.failWrites(with: TestError("disk full"))
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isError }
        guard case .error(let content, let error)? = recorder.latest,
            case StoreFlowableError.cacheWriteFailed(let underlying) = error
        else {
            Issue.record("expected .error with cacheWriteFailed, got \(String(describing: recorder.latest))")
            return
        }
        #expect(content == "stale")
        #expect(underlying as? TestError == TestError("disk full"))
        #expect(fixture.cache.value == "stale")
        recorder.cancel()
    }

    @Test func requireDataThrowsCacheWriteFailedWhenTheFetchedValueCannotBeSaved() async throws {
        let fixture = StoreFixture(origin: [.success("fresh")])
        fixture.cache.failWrites(with: TestError("disk full"))
        do {
            _ = try await fixture.store.requireData()
            Issue.record("expected cacheWriteFailed")
        } catch StoreFlowableError.cacheWriteFailed(let underlying) {
            #expect(underlying as? TestError == TestError("disk full"))
        }
        #expect(await fixture.store.dataState().rawError != nil)
    }

    @Test func aFailingUpdateReportsTheErrorWithThePreviousContent() async throws {
        let fixture = StoreFixture(cached: "valid")
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.cache.failWrites(with: TestError("read-only"))
        await fixture.store.update(newData: "rejected")
        try await recorder.waitForLatest { $0.isError }
        #expect(recorder.latest?.content == "valid")
        #expect(fixture.cache.value == "valid")
        recorder.cancel()
    }

    @Test func aThrowingOriginLeavesAnErrorStateAndTheCacheUntouched() async throws {
        let fixture = StoreFixture(cached: "valid", origin: [.failure(TestError("500"))])
        await fixture.store.refresh()
        #expect(fixture.cache.value == "valid")
        #expect(fixture.cache.writeCount == 0)
        #expect(await fixture.store.dataState().rawError as? TestError == TestError("500"))
    }
}
