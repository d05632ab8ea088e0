import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Updates, clears, refreshes and cancellations racing each other on one key: nothing hangs, nothing is
/// left loading, and the cache and the subscribers end on the same value.
@Suite(.timeLimit(.minutes(3)))
struct RaceStressTests {
    @Test(arguments: 0..<4)
    func updatesClearsAndFetchesRacingEndConsistent(seed: Int) async throws {
        let fixture = StoreFixture(cached: "valid")
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        let store = fixture.store
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<2_000 {
                let operation = (index &* 7 &+ seed) % 6
                group.addTask {
                    switch operation {
                    case 0: await store.update(newData: "update-\(index)")
                    case 1: await store.clear()
                    case 2: await store.refresh()
                    case 3: _ = await store.getData(from: .origin)
                    case 4: await store.validate()
                    default:
                        let task = Task { _ = try? await store.requireData(from: .origin) }
                        if index % 2 == 0 { task.cancel() }
                        await task.value
                    }
                }
            }
        }
        // Once the last fetch (started for the subscriber after a clear) settles, everything agrees.
        try await recorder.waitForLatest { state in
            if case .completed = state { return true }
            return false
        }
        await eventually { await store.dataState().isLoading == false }
        try await recorder.waitForLatest { $0.content == fixture.cache.value && $0.isCompleted }
        #expect(fixture.cache.value != nil)
        #expect(fixture.origin.maxConcurrentCalls == 1)
        #expect(await fixture.registry().waiters == 0)
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func subscribersComingAndGoingDuringFetchesLeaveNothingBehind() async throws {
        let fixture = StoreFixture(cached: "stale")
        let store = fixture.store
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<2_000 {
                group.addTask {
                    if index % 3 == 0 {
                        for await state in store.publish() where !state.isLoadingState { break }
                    } else if index % 3 == 1 {
                        let task = Task { for await _ in store.publish() {} }
                        task.cancel()
                        await task.value
                    } else {
                        await store.update(newData: index % 2 == 0 ? "stale-\(index)" : nil)
                    }
                }
            }
        }
        await fixture.waitUntilReleased()
        #expect(await fixture.registry() == (0, 0))
        #expect(fixture.origin.maxConcurrentCalls <= 1)
    }
}
