import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// `reloadFromCache()` on a store and `reloadFromCache(forKey:)`/`reloadFromCache(where:)` on a
/// ``KeyedStore``: the cache was changed by something other than the store's manager (another process
/// sharing it, simulated here by writing the test cache directly).
@Suite(.timeLimit(.minutes(1)))
struct ReloadFromCacheTests {
    @Test func subscribersSeeAValueWrittenElsewhereWithoutAFetch() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1))
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.cache.insert("remote", forKey: "key", storedAt: fixture.clock.now)
        await fixture.stores.reloadFromCache(forKey: "key")
        let latest = try await recorder.waitForLatest { $0.content == "remote" }
        #expect(latest.isCompleted)
        #expect(fixture.origin.callCount == 0)
        // A reload writes nothing: the change is not repeated, so a notification is never echoed.
        #expect(fixture.cache.writeAttemptCount == 0)
        #expect(fixture.cache.invalidatedKeys.isEmpty)
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    @Test func aValueInvalidatedElsewhereIsRefetchedForSubscribersWhoKeepTheirContent() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1))
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.origin.hold()
        fixture.cache.insert("cached", forKey: "key", storedAt: fixture.clock.now, isInvalidated: true)
        await fixture.stores.reloadFromCache(forKey: "key")
        let loading = try await recorder.waitForLatest { $0.isLoading }
        #expect(loading.content == "cached")
        fixture.origin.release()
        let latest = try await recorder.waitForLatest { $0.isCompleted }
        #expect(latest.content == "fresh-1")
        recorder.cancel()
    }

    @Test func aValueRemovedElsewhereIsRefetchedForSubscribers() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1))
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        try await fixture.cache.removeEntry(forKey: "key")
        await fixture.stores.reloadFromCache(forKey: "key")
        let latest = try await recorder.waitForLatest { $0.isCompleted && $0.content == "fresh-1" }
        #expect(latest.content == "fresh-1")
        #expect(recorder.states.contains { $0.isLoading && $0.content == nil })
        recorder.cancel()
    }

    @Test func aKeyNobodyUsesIsLeftAlone() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1))
        await fixture.stores.reloadFromCache(forKey: "key")
        await fixture.store.reloadFromCache()
        #expect(fixture.cache.readCount == 0)
        #expect(await fixture.stores.manager.trackedKeyCount == 0)
    }

    @Test func aFetchThatBeganBeforeTheChangeIsDroppedAndItsCallerGetsTheReloadedValue() async throws {
        let fixture = FreshnessFixture()
        fixture.origin.hold()
        let caller = Task { try await fixture.store.requireData() }
        await fixture.origin.waitForCalls(1)
        fixture.cache.insert("remote", forKey: "key", storedAt: fixture.clock.now)
        await fixture.stores.reloadFromCache(forKey: "key")
        #expect(try await caller.value == "remote")
        await fixture.origin.waitForCancellations(1)
        fixture.origin.release()
        await fixture.waitUntilIdle()
        // The dropped fetch never wrote: the value written elsewhere stays.
        #expect(fixture.cache["key"] == CacheEntry(value: "remote", storedAt: fixture.clock.now))
        #expect(fixture.cache.writeAttemptCount == 0)
    }

    @Test func callersOfADroppedFetchAreServedByANewFetchWhenNothingFreshIsCached() async throws {
        let fixture = FreshnessFixture()
        fixture.origin.hold()
        let caller = Task { try await fixture.store.requireData() }
        await fixture.origin.waitForCalls(1)
        await fixture.stores.reloadFromCache(forKey: "key")
        await fixture.origin.waitForCancellations(1)
        fixture.origin.release()
        #expect(try await caller.value == "fresh-2")
        #expect(fixture.origin.callCount == 2)
    }

    /// The issue's rule: a change that arrives while a fetch is in flight leaves the key stale after
    /// the fetch writes.
    @Test func aFetchAlreadyWritingIsMarkedStaleOnceItHasWritten() async throws {
        let fixture = FreshnessFixture()
        let recorder = StateRecorder(fixture.store.publish())
        fixture.cache.holdWrites()
        await fixture.cache.waitForWriteAttempts(1)
        let reload = Task { await fixture.stores.reloadFromCache(forKey: "key") }
        await eventually { await fixture.stores.manager.writeQueueLength(for: "key", String.self) == 1 }
        fixture.origin.hold()
        fixture.cache.releaseWrites()
        await reload.value
        #expect(fixture.cache["key"]?.value == "fresh-1")
        #expect(fixture.cache["key"]?.isInvalidated == true)
        // The subscriber is refetched: the value it was shown may be older than the change.
        fixture.origin.release()
        let latest = try await recorder.waitForLatest { $0.isCompleted && $0.content == "fresh-2" }
        #expect(latest.content == "fresh-2")
        #expect(fixture.cache["key"]?.isInvalidated == false)
        recorder.cancel()
    }

    @Test func aFreshValueWrittenElsewhereClearsTheErrorSubscribersSaw() async throws {
        let fixture = FreshnessFixture(origin: [.failure(TestError("down"))])
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isError }
        fixture.cache.insert("remote", forKey: "key", storedAt: fixture.clock.now)
        await fixture.stores.reloadFromCache(forKey: "key")
        let latest = try await recorder.waitForLatest { $0.isCompleted }
        #expect(latest.content == "remote")
        guard case .fixed = await fixture.store.dataState() else {
            Issue.record("the key's error outlived the reload")
            return
        }
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    @Test func aCancelledCallerStillUsesAndReleasesTheWriteTurn() async throws {
        let fixture = FreshnessFixture()
        let recorder = StateRecorder(fixture.store.publish())
        fixture.cache.holdWrites()
        await fixture.cache.waitForWriteAttempts(1)
        let reload = Task { await fixture.stores.reloadFromCache(forKey: "key") }
        await eventually { await fixture.stores.manager.writeQueueLength(for: "key", String.self) == 1 }
        reload.cancel()
        fixture.cache.releaseWrites()
        await reload.value
        // The reload ran: the value written before it is marked stale and refetched.
        try await recorder.waitForLatest { $0.isCompleted && $0.content == "fresh-2" }
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    @Test func aFailedMarkIsReportedAndTheReloadStillEnds() async throws {
        let events = ReloadEventLog()
        let clock = ManualCacheClock()
        let cache = TestKeyedCache<String, String>(policy: FreshnessFixture.policy, clock: clock)
        let origin = ScriptedOrigin<String>([], otherwise: { .success("fresh-\($0)") })
        let stores = KeyedStore(cache: cache, manager: FlowableDataStateManager(observer: events)) { _ in
            try await origin.fetch()
        }
        let recorder = StateRecorder(stores["key"].publish())
        cache.holdWrites()
        await cache.waitForWriteAttempts(1)
        let reload = Task { await stores.reloadFromCache(forKey: "key") }
        await eventually { await stores.manager.writeQueueLength(for: "key", String.self) == 1 }
        cache.releaseWrites()
        await eventually { cache.writeCount == 1 }
        cache.failWrites(with: TestError("read-only"))
        await reload.value
        #expect(events.kinds.contains("stale mark failed"))
        #expect(events.kinds.contains("reloaded"))
        // The value that could not be marked is not taken as fresh: the subscriber is refetched, and with
        // the cache still read-only the refetch's write fails too (the key remembers that error).
        try await recorder.waitForLatest { $0.isError }
        #expect(origin.callCount == 2)
        recorder.cancel()
        await eventually { await stores.manager.isIdle("key", String.self) }
    }

    @Test func reloadWhereVisitsOnlyTrackedKeysThatMatch() async throws {
        let fixture = FreshnessFixture()
        for key in ["a", "b", "c"] { fixture.cache.insert("old-\(key)", forKey: key, storedAt: fixture.clock.now) }
        let a = StateRecorder(fixture.stores["a"].publish())
        let b = StateRecorder(fixture.stores["b"].publish())
        try await a.waitForLatest { $0.isCompleted }
        try await b.waitForLatest { $0.isCompleted }
        for key in ["a", "b", "c"] { fixture.cache.insert("new-\(key)", forKey: key, storedAt: fixture.clock.now) }
        fixture.cache.resetRecords()
        await fixture.stores.reloadFromCache(where: { $0 != "b" })
        try await a.waitForLatest { $0.content == "new-a" }
        #expect(b.latest?.content == "old-b")
        // "c" is not tracked and "b" not chosen: only "a" was read.
        #expect(fixture.cache.readKeys == ["a"])
        // Through the manager, with any store.
        await fixture.stores.manager.reloadFromCache(where: { _ in true }) { fixture.stores[$0] }
        try await b.waitForLatest { $0.content == "new-b" }
        a.cancel()
        b.cancel()
    }

    @Test func aReloadFromInsideTheKeysOwnCacheWriteRunsAfterIt() async throws {
        let clock = ManualCacheClock()
        let cache = ReloadingCache(policy: FreshnessFixture.policy, clock: clock)
        let stores = KeyedStore(cache: cache) { _ in "fetched" }
        // Only the first write calls back: the reload marks the value that write stored (it began before
        // the reload), and a reload on every write would then go on for ever.
        cache.onWrite = {
            cache.onWrite = nil
            await stores.reloadFromCache(forKey: "key")
        }
        let recorder = StateRecorder(stores["key"].publish())
        // The call returned at once (the write finished); the reload ran after it, in a task of its own,
        // and read the cache (the subscriber's own read came before any write).
        await eventually { cache.reloadReads >= 1 }
        try await recorder.waitForLatest { $0.isCompleted && $0.content == "fetched" }
        recorder.cancel()
        await eventually { await stores.manager.trackedKeyCount == 0 }
    }

    @Test func everyCallerAndStreamCancelledAroundAReloadLeavesNothingBehind() async throws {
        for round in 0..<(isRunningUnderThreadSanitizer ? 20 : 100) {
            let fixture = FreshnessFixture(cached: round.isMultiple(of: 2) ? "cached" : nil, age: .seconds(1))
            let recorder = StateRecorder(fixture.store.publish())
            let callers = (0..<3).map { _ in Task { try? await fixture.store.requireData() } }
            let reload = Task { await fixture.stores.reloadFromCache(forKey: "key") }
            for _ in 0..<(round % 5) { await Task.yield() }
            fixture.cache.insert("remote-\(round)", forKey: "key", storedAt: fixture.clock.now)
            if round.isMultiple(of: 3) { reload.cancel() }
            for caller in callers where round.isMultiple(of: 4) { caller.cancel() }
            await fixture.stores.reloadFromCache(forKey: "key")
            for caller in callers { _ = await caller.value }
            await reload.value
            recorder.cancel()
            await fixture.waitUntilIdle()
            #expect(await fixture.stores.manager.trackedKeyCount == 0, "round \(round)")
        }
    }
}

/// The events an observer received, by kind.
private final class ReloadEventLog: StoreEventObserver {
    private let events = LockedValue<[String]>([])

    func observe(_ event: StoreEvent) {
        let kind: String
        switch event.kind {
        case .reloaded: kind = "reloaded"
        case .staleMarkFailed: kind = "stale mark failed"
        default: kind = "\(event.kind)"
        }
        events.withLock { $0.append(kind) }
    }

    var kinds: [String] { events.withLock { $0 } }
}

/// A memory cache that runs `onWrite` inside each write (to call back into the store from there) and
/// counts the reads made after the first write.
private final class ReloadingCache: KeyedCache, Sendable {
    let policy: FreshnessPolicy
    let clock: any CacheClock
    private let state = LockedValue<(entry: CacheEntry<String>?, writes: Int, readsAfterWrite: Int)>((nil, 0, 0))
    private let hook = LockedValue<(@Sendable () async -> Void)?>(nil)

    init(policy: FreshnessPolicy, clock: any CacheClock) {
        self.policy = policy
        self.clock = clock
    }

    var onWrite: (@Sendable () async -> Void)? {
        get { hook.withLock { $0 } }
        set { hook.withLock { $0 = newValue } }
    }

    var reloadReads: Int { state.withLock { $0.readsAfterWrite } }
    var writes: Int { state.withLock { $0.writes } }

    func entry(forKey key: String) async throws -> CacheEntry<String>? {
        state.withLock { state in
            if state.writes > 0 { state.readsAfterWrite += 1 }
            return state.entry
        }
    }

    func setEntry(_ entry: CacheEntry<String>, forKey key: String) async throws {
        state.withLock { state in
            state.entry = entry
            state.writes += 1
        }
        await onWrite?()
    }

    func removeEntry(forKey key: String) async throws { state.withLock { $0.entry = nil } }
    func invalidateEntries(where isIncluded: @escaping @Sendable (String) -> Bool) async throws {}
    func removeAllEntries() async throws { state.withLock { $0.entry = nil } }
}
