import StoreFlowable
import StoreFlowableTesting
import Testing

@Suite struct TestStoreCallbackTests {
    /// A callback over a fresh cache and origin; values starting with "stale" need refresh.
    private func makeCallback(
        cached: String?, origin results: [Result<String, any Error>]
    ) -> TestStoreCallback<String, String> {
        TestStoreCallback(
            key: "key", manager: FlowableDataStateManager<String>(), cache: InMemoryCache(cached),
            origin: ScriptedOrigin(results), needRefresh: { $0.hasPrefix("stale") })
    }

    @Test(.timeLimit(.minutes(1)))
    func operationsForwardToTheDoubles() async throws {
        let callback = makeCallback(cached: "stale", origin: [.success("fresh")])
        #expect(try await callback.loadDataFromCache() == "stale")
        #expect(await callback.needRefresh(cachedData: "stale"))
        #expect(!(await callback.needRefresh(cachedData: "fresh")))
        #expect(try await callback.fetchDataFromOrigin() == "fresh")
        try await callback.saveDataToCache(newData: "fresh")
        #expect(callback.cache.readCount == 1)
        #expect(callback.cache.writes == ["fresh"])
        #expect(callback.origin.callCount == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func storeFetchesAStaleValueAndCachesTheResult() async throws {
        let callback = makeCallback(cached: "stale", origin: [.success("fresh")])
        let store = callback.create()
        #expect(try await store.requireData() == "fresh")
        #expect(callback.cache.value == "fresh")
        #expect(callback.origin.callCount == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func heldFetchShowsLoadingUntilReleased() async throws {
        let callback = makeCallback(cached: nil, origin: [.success("fresh")])
        callback.origin.hold()
        let recorder = StateRecorder(callback.create().publish())
        await callback.origin.waitForCalls(1)
        try await recorder.waitForLatest { $0.snapshot == .loading(nil) }
        callback.origin.release()
        try await recorder.waitForLatest { $0.snapshot == .completed("fresh") }
        #expect(recorder.snapshots == [.loading(nil), .completed("fresh")])
        recorder.cancel()
        await recorder.finished()
    }
}
