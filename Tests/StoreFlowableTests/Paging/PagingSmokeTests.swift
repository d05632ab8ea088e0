import StoreFlowableTesting
import Testing

@testable import StoreFlowable

@Suite(.timeLimit(.minutes(1)))
struct PagingSmokeTests {
    @Test func loadsPagesInBothDirections() async throws {
        let fixture = PagingFixture()
        fixture.origin.enqueue(value: PagedData(data: [10, 11], nextCursor: 12, prevCursor: 9))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12, 13], cursor: nil))
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [8, 9], cursor: 7))
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        _ = try await recorder.waitForLatest { $0.content == [10, 11] && $0.isCompleted }
        await store.requestNextData()
        await store.requestPrevData()
        #expect(fixture.cache.value == PagedData(data: [8, 9, 10, 11, 12, 13], nextCursor: nil, prevCursor: 7))
        let latest = try await recorder.waitForLatest { $0.content == [8, 9, 10, 11, 12, 13] }
        guard case .completed(_, let next, let prev) = latest else {
            Issue.record("not completed: \(latest)")
            return
        }
        #expect(!next.canRequestAdditionalData)
        #expect(prev.canRequestAdditionalData)
        #expect(fixture.callback.requestedNextCursors == [12])
        #expect(fixture.callback.requestedPrevCursors == [9])
        recorder.cancel()
        await fixture.waitUntilReleased()
    }
}
