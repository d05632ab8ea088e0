import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// `Loader` over real stores: release, repeated and cancelled refreshes, and the loader without a cache.
@MainActor
@Suite("Loader lifecycle", .timeLimit(.minutes(1)))
struct LoaderLifecycleTests {
    @Test func aReleasedLoaderShowingAValueReleasesItsKey() async {
        let f = FreshnessFixture(cached: "cached")
        var loader: Loader<String, String>? = Loader(f.stores)
        loader?.load(key: "key")
        await eventuallyOnMain { loader?.object == "cached" && loader?.isLoading == false }
        #expect(await f.stores.manager.trackedKeys(of: String.self) == ["key"])
        weak let released = loader
        loader = nil
        #expect(released == nil, "a task keeps the loader alive")
        await eventuallyOnMain { await f.stores.manager.trackedKeys(of: String.self).isEmpty }
        #expect(f.origin.callCount == 0)
    }

    @Test func aLoaderThatNeverLoadedIsReleased() {
        let f = FreshnessFixture()
        var loader: Loader<String, String>? = Loader(f.stores)
        weak let released = loader
        loader = nil
        #expect(released == nil)
    }

    @Test func manyRefreshCallsWhileOneRunsShareOneRefreshAndOneFetch() async {
        let f = FreshnessFixture(cached: "cached")
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await eventuallyOnMain { loader.object == "cached" && !loader.isLoading }
        f.origin.hold()
        for _ in 0..<100 { loader.refresh(key: "key") }
        await f.origin.waitForCalls(1)
        // This loader's refreshes are one waiter of the fetch, however many calls were made.
        await eventuallyOnMain { await f.stores.manager.registryCounts(for: "key", String.self).waiters == 1 }
        #expect(await f.stores.manager.registryCounts(for: "key", String.self) == (subscribers: 1, waiters: 1))
        f.origin.release()
        await eventuallyOnMain { loader.object == "fresh-1" && !loader.isLoading }
        #expect(f.origin.callCount == 1)
    }

    @Test func aRefreshAfterACancelledRefreshFetchesAgain() async {
        let f = FreshnessFixture(cached: "cached")
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await eventuallyOnMain { loader.object == "cached" && !loader.isLoading }
        f.origin.hold()
        loader.refresh(key: "key")
        await f.origin.waitForCalls(1)
        loader.cancel()
        // Nobody else waited for the fetch: the store cancels it.
        await f.origin.waitForCancellations(1)
        #expect(loader.error == nil)
        #expect(loader.object == "cached")
        f.origin.release()
        loader.refresh(key: "key")
        #expect(loader.isLoading)
        await eventuallyOnMain { loader.object == "fresh-2" && !loader.isLoading }
        #expect(loader.error == nil)
    }

    /// A refresh that reaches the store while the load's request runs joins it; one that reaches it
    /// after the request ended (its task starts on the main actor after this test's turn) makes the
    /// next request. Either way the loader's own store never runs two requests of the key at once.
    @Test func aLoaderWithoutACacheNeverRunsTwoRequestsOfOneKeyAtOnce() async {
        let origin = ScriptedOrigin<String>([], otherwise: { .success("fetched-\($0)") })
        origin.hold()
        let loader = Loader<String, String> { _ in try await origin.fetch() }
        loader.load(key: "key")
        await origin.waitForCalls(1)
        loader.refresh(key: "key")
        loader.refresh(key: "key")
        #expect(origin.inFlightCount == 1)
        origin.release()
        await eventuallyOnMain { loader.object != nil && !loader.isLoading }
        #expect(origin.maxConcurrentCalls == 1)
        #expect(origin.callCount <= 2)
        #expect(loader.error == nil)
    }

    /// A refresh asked for once the previous refresh's value is shown, but before that refresh's task
    /// ended, fetches again (it joined the ending refresh and fetched nothing).
    @Test func aRefreshAskedForOnceTheRefreshedValueIsShownFetchesAgain() async {
        let store = GatedRefreshStore()
        let loader = Loader<String, String>(storeFor: { _ in store })
        loader.load(key: "key")
        store.send(.completed("v1"))
        await eventuallyOnMain { loader.object == "v1" && !loader.isLoading }
        loader.refresh(key: "key")
        await eventuallyOnMain { store.refreshCount == 1 }
        store.send(.loading(content: "v1"))
        store.send(.completed("v2"))
        await eventuallyOnMain { loader.object == "v2" }
        // The first refresh's value is shown (its store call has not returned); another is asked for.
        loader.refresh(key: "key")
        #expect(loader.isLoading)
        await eventuallyOnMain { store.refreshCount == 2 }
        store.openGate()
        await eventuallyOnMain { !loader.isLoading }
        #expect(store.refreshCount == 2)
    }
}
