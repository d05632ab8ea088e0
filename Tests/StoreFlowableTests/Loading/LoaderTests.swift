import StoreFlowableTesting
import Testing

@testable import StoreFlowable

private let down = TestError("down")

/// `Loader`: what it shows for each state, superseding, refresh, cancel, cancellation, release, and
/// Observation. Each promise of the type's documentation has a test here.
@MainActor
@Suite("Loader", .timeLimit(.minutes(1)))
struct LoaderTests {
    // MARK: What it shows

    @Test func anEmptyCacheShowsLoadingThenTheFetchedValue() async {
        let f = FreshnessFixture()
        f.origin.hold()
        let loader = Loader(f.stores)
        loader.load(key: "key")
        #expect(loader.key == "key")
        #expect(loader.isLoading)
        await f.origin.waitForCalls(1)
        #expect(loader.object == nil)
        f.origin.release()
        await eventuallyOnMain { loader.object != nil }
        #expect(loader.object == "fresh-1")
        #expect(!loader.isLoading)
        #expect(loader.error == nil)
        #expect(loader.state?.isCompleted == true)
    }

    @Test func aFreshValueIsShownWithNoFetch() async {
        let f = FreshnessFixture(cached: "cached")
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await eventuallyOnMain { !loader.isLoading }
        #expect(loader.object == "cached")
        #expect(f.origin.callCount == 0)
    }

    @Test func aStaleValueIsShownAtOnceAndReplacedWhenTheFetchReturns() async {
        let f = FreshnessFixture(cached: "cached", age: .seconds(12))
        f.origin.hold()
        let loader = Loader(f.stores)
        let history = ObservedHistory { loader.object }
        loader.load(key: "key")
        await eventuallyOnMain { loader.object == "cached" }
        #expect(loader.isLoading)
        f.origin.release()
        await eventuallyOnMain { loader.object == "fresh-1" }
        #expect(!loader.isLoading)
        await eventuallyOnMain { history.values.last == "fresh-1" }
        #expect(history.values.compactMap { $0 } == ["cached", "fresh-1"])
    }

    @Test func aFailedLoadShowsTheErrorAndTheCachedContent() async {
        let f = FreshnessFixture(cached: "cached", age: .seconds(50), origin: [.failure(down)])
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await eventuallyOnMain { loader.error != nil }
        #expect(loader.error as? TestError == down)
        #expect(loader.object == "cached")
        #expect(!loader.isLoading)
        #expect(loader.state?.isError == true)
    }

    // MARK: Load

    @Test func loadingTheSameKeyAgainMakesNoSecondSubscriptionOrFetch() async {
        let f = FreshnessFixture()
        f.origin.hold()
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await f.origin.waitForCalls(1)
        loader.load(key: "key")
        loader.load(key: "key")
        #expect(await f.stores.manager.registryCounts(for: "key", String.self).subscribers <= 1)
        f.origin.release()
        await eventuallyOnMain { loader.object == "fresh-1" }
        #expect(f.origin.callCount == 1)
        #expect(await f.stores.manager.registryCounts(for: "key", String.self).subscribers == 1)
    }

    /// The seed library let whichever load finished last win. Here the first key's value arrives after
    /// the second load began and is never shown, not even for a moment.
    @Test func aLoadOfAnotherKeySupersedesTheLoadBefore() async {
        let gates = (a: Signal(), b: Signal())
        let cache = MemoryCache<String, String>(policy: .forever)
        let stores = KeyedStore(cache: cache) { key in
            await (key == "a" ? gates.a : gates.b).wait()
            return "value of \(key)"
        }
        let loader = Loader(stores)
        let history = ObservedHistory { loader.object }
        loader.load(key: "a")
        loader.load(key: "b")
        #expect(loader.key == "b")
        gates.a.open()
        // "a"'s fetch may have been cancelled when the loader left it, or may have finished; either way
        // nothing of it may reach the loader.
        await eventuallyOnMain { await stores.manager.isIdle("a", String.self) }
        for _ in 0..<10 { await Task.yield() }
        #expect(loader.object == nil)
        gates.b.open()
        await eventuallyOnMain { loader.object == "value of b" }
        #expect(!history.values.contains("value of a"))
        #expect(loader.key == "b")
    }

    @Test func aNewKeyClearsTheObjectAndErrorOfTheOldOne() async {
        let f = FreshnessFixture(cached: "cached", age: .seconds(50), origin: [.failure(down)])
        f.origin.hold()
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await f.origin.waitForCalls(1)
        f.origin.release()
        await eventuallyOnMain { loader.error != nil }
        f.origin.hold()
        loader.load(key: "other")
        #expect(loader.object == nil)
        #expect(loader.error == nil)
        #expect(loader.state == nil)
        #expect(loader.isLoading)
        f.origin.release()
        await eventuallyOnMain { loader.object == "fresh-2" }
    }

    // MARK: Refresh

    @Test func refreshFetchesAFreshValueAgainAndKeepsItShownUntilTheNewOneArrives() async {
        let f = FreshnessFixture(cached: "cached")
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await eventuallyOnMain { loader.object == "cached" && !loader.isLoading }
        f.origin.hold()
        let history = ObservedHistory { loader.object }
        loader.refresh(key: "key")
        #expect(loader.isLoading)
        await f.origin.waitForCalls(1)
        #expect(loader.object == "cached")
        f.origin.release()
        await eventuallyOnMain { loader.object == "fresh-1" && !loader.isLoading }
        #expect(!history.values.contains(nil), "the shown value disappeared during the refresh")
    }

    @Test func refreshWhileALoadRunsJoinsItsFetch() async {
        let f = FreshnessFixture()
        f.origin.hold()
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await f.origin.waitForCalls(1)
        loader.refresh(key: "key")
        loader.refresh(key: "key")
        // The refresh joined the running fetch as a waiter (one: the second call joined the first).
        await eventuallyOnMain { await f.stores.manager.registryCounts(for: "key", String.self).waiters == 1 }
        f.origin.release()
        await eventuallyOnMain { loader.object == "fresh-1" && !loader.isLoading }
        #expect(f.origin.callCount == 1)
    }

    /// The seed library never reset its task handle after an error, so refresh did nothing for ever.
    @Test func refreshWorksAfterAFailure() async {
        let f = FreshnessFixture(origin: [.failure(down)])
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await eventuallyOnMain { loader.error != nil && !loader.isLoading }
        loader.refresh(key: "key")
        await eventuallyOnMain { loader.object == "fresh-2" }
        #expect(loader.error == nil)
        #expect(!loader.isLoading)
        loader.refresh(key: "key")
        await eventuallyOnMain { loader.object == "fresh-3" && !loader.isLoading }
    }

    @Test func refreshOfAnotherKeyLoadsIt() async {
        let f = FreshnessFixture(cached: "cached")
        let loader = Loader(f.stores)
        loader.refresh(key: "other")
        #expect(loader.key == "other")
        await eventuallyOnMain { loader.object == "fresh-1" && !loader.isLoading }
        #expect(f.origin.callCount == 1)
    }

    // MARK: Cancel

    @Test func cancelStopsTheLoadWithoutAnErrorAndALaterLoadWorks() async {
        let f = FreshnessFixture()
        f.origin.hold()
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await f.origin.waitForCalls(1)
        loader.cancel()
        #expect(!loader.isLoading)
        // Nobody else waited: the store cancels its fetch.
        await f.origin.waitForCancellations(1)
        f.origin.release()
        await f.waitUntilIdle()
        #expect(loader.error == nil)
        #expect(loader.object == nil)
        loader.load(key: "key")
        await eventuallyOnMain { loader.object == "fresh-2" }
    }

    @Test func cancelKeepsTheShownObjectAndError() async {
        let f = FreshnessFixture(cached: "cached", age: .seconds(50), origin: [.failure(down)])
        let loader = Loader(f.stores)
        loader.load(key: "key")
        await eventuallyOnMain { loader.error != nil }
        f.origin.hold()
        loader.refresh(key: "key")
        await f.origin.waitForCalls(2)
        loader.cancel()
        #expect(loader.object == "cached")
        #expect(loader.error as? TestError == down)
        #expect(!loader.isLoading)
        f.origin.release()
    }

    @Test func cancellingALoadersRefreshLeavesAFetchOtherLoadersWaitForRunning() async {
        let f = FreshnessFixture(cached: "cached")
        let first = Loader(f.stores)
        let second = Loader(f.stores)
        first.load(key: "key")
        second.load(key: "key")
        await eventuallyOnMain { first.object == "cached" && second.object == "cached" }
        f.origin.hold()
        first.refresh(key: "key")
        second.refresh(key: "key")
        await f.origin.waitForCalls(1)
        first.cancel()
        f.origin.release()
        await eventuallyOnMain { second.object == "fresh-1" && !second.isLoading }
        #expect(f.origin.cancelledCount == 0)
        #expect(first.object == "cached")
    }

    @Test func cancellationIsNeverShownAsAnError() async {
        let loader = Loader<String, String>(storeFor: { _ in
            StateScriptStore(states: [.loading(content: "old"), .error(content: "old", rawError: CancellationError())])
        })
        loader.load(key: "key")
        await eventuallyOnMain { loader.state?.isError == true }
        #expect(loader.error == nil)
        #expect(!loader.isLoading)
        #expect(loader.object == "old")
    }

    // MARK: Release

    @Test func aReleasedLoaderStopsObservingAndTheStoreReleasesTheKey() async {
        let f = FreshnessFixture()
        f.origin.hold()
        var loader: Loader<String, String>? = Loader(f.stores)
        loader?.load(key: "key")
        loader?.refresh(key: "key")
        await f.origin.waitForCalls(1)
        weak let released = loader
        loader = nil
        #expect(released == nil, "a task keeps the loader alive")
        await f.origin.waitForCancellations(1)
        f.origin.release()
        await f.waitUntilIdle()
    }

    @Test func aLoaderWithoutACacheFetchesOnEveryLoad() async {
        let calls = LockedCounter()
        let loader = Loader<String, String> { key in
            "\(key) #\(calls.increment())"
        }
        loader.load(key: "key")
        await eventuallyOnMain { loader.object == "key #1" }
        loader.cancel()
        loader.load(key: "key")
        await eventuallyOnMain { loader.object == "key #2" }
    }

    // MARK: Observation

    @Test func observationReportsEachChangeOfObjectErrorAndIsLoading() async {
        let f = FreshnessFixture(origin: [.success("v1"), .failure(down)], otherwise: nil)
        f.origin.hold()
        let loader = Loader(f.stores)
        let objects = ObservedHistory { loader.object }
        let errors = ObservedHistory { loader.error.map { "\($0)" } }
        let loading = ObservedHistory { loader.isLoading }
        loader.load(key: "key")
        await eventuallyOnMain { loading.values.last == true }
        await f.origin.waitForCalls(1)
        f.origin.release()
        await eventuallyOnMain { objects.values.last == "v1" && loading.values.last == false }
        loader.refresh(key: "key")
        await eventuallyOnMain { errors.values.last == "\(down)" && loading.values.last == false }
        #expect(objects.values == [nil, "v1"])
        #expect(errors.values == [nil, "\(down)"])
        #expect(loading.values == [false, true, false, true, false])
    }

    // MARK: Many loaders

    @Test func aThousandLoadersOfOneKeyShareOneFetch() async {
        let f = FreshnessFixture()
        f.origin.hold()
        let loaders = (0..<1_000).map { _ in Loader(f.stores) }
        for loader in loaders { loader.load(key: "key") }
        await eventuallyOnMain { await f.stores.manager.registryCounts(for: "key", String.self).subscribers == 1_000 }
        f.origin.release()
        await eventuallyOnMain { loaders.allSatisfy { $0.object == "fresh-1" && !$0.isLoading } }
        #expect(f.origin.callCount == 1)
    }
}
