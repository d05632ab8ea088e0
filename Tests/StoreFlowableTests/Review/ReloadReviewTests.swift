import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// The independent review of `reloadFromCache()`: the promises of its doc comment and of
/// `Docs/ConcurrencyGuarantees.md` under adversarial schedules, reached with gates (held cache reads and
/// writes, a held origin, hooks inside each cache callback), never by sleeping.
@Suite("Reload review: promises under adversarial schedules", .timeLimit(.minutes(1)))
struct ReloadReviewTests {
    static let page = PagedData(data: [10, 11], nextCursor: 12, prevCursor: 9)

    // MARK: A fetch already writing when the change arrives

    /// The reload's promise: a fetch already writing "writes first; since its value may be older than
    /// the change, the reload then marks it stale ... so the key is never left fresh with it". A callback
    /// that keeps no mark (the default `invalidateCache()`) cannot be marked: the reload must not take
    /// what it reads as fresh, and refetches for the subscribers.
    @Test func aValueWrittenBehindTheChangeIsRefetchedWhenTheCacheKeepsNoMark() async throws {
        let fixture = StoreFixture(cached: "stale")
        let recorder = StateRecorder(fixture.store.publish())
        fixture.cache.holdWrites()
        await fixture.cache.waitForWriteAttempts(1)
        let reload = Task { await fixture.store.reloadFromCache() }
        await eventually { await fixture.manager.writeQueueLength(for: "key", String.self) == 1 }
        fixture.origin.hold()
        fixture.cache.releaseWrites()
        await reload.valueOrCancel
        #expect(await fixture.store.dataState().isLoading, "fresh-1, written after the change, was kept as fresh")
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted(with: "fresh-2") }
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    /// The same promise for a paged store, whose adapter keeps no mark: a page fetched for the data before
    /// the change, merged after it, is refetched as a first page.
    @Test func aPageMergedBehindTheChangeIsRefetchedAsAFirstPage() async throws {
        let fixture = PagingFixture(cached: Self.page)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.cache.holdWrites()
        let page = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)
        let reload = Task { await store.reloadFromCache() }
        await eventually { await fixture.manager.writeQueueLength(for: "list", PagingFixture.Record.self) == 1 }
        fixture.origin.hold()
        fixture.cache.releaseWrites()
        _ = await page.valueOrCancel
        await reload.valueOrCancel
        #expect(await store.dataState().isLoading, "the merged page, fetched before the change, was kept as fresh")
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted && $0.content == [1, 2] }
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    /// The same promise when the mark throws (`staleMarkFailed`): the subscribers are refetched, and the
    /// refetch's write replaces the value the cache could not mark.
    @Test func aValueWhoseMarkFailedIsRefetched() async throws {
        let fixture = RRFixture()
        let recorder = StateRecorder(fixture.store.publish())
        fixture.cache.holdWrites()
        await fixture.cache.waitForWriteAttempts(1)
        let reload = Task { await fixture.stores.reloadFromCache(forKey: "key") }
        await fixture.waitForQueue(1)
        fixture.hooks.onNextInvalidate { _ in fixture.cache.failWrites(with: TestError("read-only")) }
        fixture.origin.hold()
        fixture.cache.releaseWrites()
        await reload.valueOrCancel
        fixture.cache.failWrites(with: nil)
        #expect(await fixture.store.dataState().isLoading, "fresh-1, which could not be marked, was kept as fresh")
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted(with: "fresh-2") }
        #expect(fixture.cache["key"]?.value == "fresh-2")
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    // MARK: Calling the store from inside the reload's own read

    /// What a cache read calls on the store while the reload that made it holds the key's write turn.
    enum CallInsideRead: String, CaseIterable, Sendable {
        case reload, update, clear, invalidate, transform, requireFromOrigin, refresh, validate, publish
        /// Another key's origin call that updates this key: a cycle of waits through two keys.
        case otherKeyUpdatingThisOne
    }

    /// Promise 13: a callback may call into the library, also into its own key, and always gets an
    /// answer; a call that would wait for the callback's own outcome is refused. The reload's read holds
    /// the key's write turn like an update's read does, so whatever it calls must not wait for that turn.
    @Test(arguments: CallInsideRead.allCases)
    func callingTheStoreFromInsideTheReloadsReadNeverWedgesTheKey(_ call: CallInsideRead) async throws {
        let fixture = RRFixture(cached: "cached") { key, stores in
            if key == "other" { await stores["key"].update(newData: "from-other") }
        }
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted(with: "cached") }
        fixture.writeElsewhere("remote")
        let answered = LockedValue(false)
        let stores = fixture.stores
        fixture.hooks.onNextRead { _ in
            await Self.perform(call, on: stores)
            answered.withLock { $0 = true }
        }
        let reload = Task { await fixture.stores.reloadFromCache(forKey: "key") }
        await eventually { answered.withLock { $0 } }
        // A wedged key never releases the reload either: stop here rather than wait for it.
        guard answered.withLock({ $0 }) else {
            Issue.record("\(call) from inside the reload's read never returned")
            return
        }
        await reload.valueOrCancel
        // The key is usable afterwards.
        await fixture.store.update(newData: "after")
        try await recorder.waitForLatest { $0.isCompleted(with: "after") }
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    static func perform(_ call: CallInsideRead, on stores: KeyedStore<RRHookCache>) async {
        let store = stores["key"]
        switch call {
        case .reload: await store.reloadFromCache()
        case .update: await store.update(newData: "inside")
        case .clear: await store.clear()
        case .invalidate: _ = try? await store.invalidate()
        case .transform: _ = try? await store.update { ($0 ?? "") + "+" }
        case .requireFromOrigin: _ = try? await store.requireData(from: .origin)
        case .refresh: await store.refresh()
        case .validate:
            // The key's value was made stale elsewhere: validating would fetch.
            await store.validate()
        case .publish:
            for await _ in store.publish() { break }
        case .otherKeyUpdatingThisOne: _ = try? await stores["other"].requireData(from: .origin)
        }
    }
}
