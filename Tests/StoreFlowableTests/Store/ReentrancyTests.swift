import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// A callback whose fetch and save run test code that calls back into the library. Values starting
/// with "stale" need refresh.
private struct HookedCallback: StoreFlowableCallback {
    typealias Hook = @Sendable (_ store: AnyStoreFlowable<String>, _ value: String?) async throws -> Void

    let key: String
    let flowableDataStateManager: FlowableDataStateManager<String>
    let cache: InMemoryCache<String>
    /// Runs inside `fetchDataFromOrigin()` (value: `nil`) before it returns `fetched`.
    var onFetch: Hook = { _, _ in }
    /// Runs inside `saveDataToCache(newData:)` before the value is stored.
    var onSave: Hook = { _, _ in }
    var fetched: @Sendable () -> String = { "fresh" }

    func loadDataFromCache() async throws -> String? { try await cache.load() }
    func saveDataToCache(newData: String?) async throws {
        try await onSave(create(), newData)
        try await cache.save(newData)
    }
    func fetchDataFromOrigin() async throws -> String {
        try await onFetch(create(), nil)
        return fetched()
    }
    func needRefresh(cachedData: String) async -> Bool { cachedData.hasPrefix("stale") }
}

/// Records what a callback saw, across tasks.
private final class Seen: Sendable {
    private let values = LockedValue([String]())
    func add(_ value: String) { values.withLock { $0.append(value) } }
    var all: [String] { values.withLock { $0 } }
}

/// Re-entrancy: a callback that calls into its own key (or closes a cycle of keys) gets an answer
/// instead of waiting for itself, and leaves every key usable. Each test would hang (and be killed by
/// the time limit or CI's `timeout`) if the call waited.
@Suite(.timeLimit(.minutes(1)))
struct ReentrancyTests {
    private static func isReentrant(_ error: any Error) -> Bool {
        if case StoreFlowableError.reentrantCall = error { return true }
        return false
    }

    /// The key is usable afterwards: a plain callback over the same manager, key and cache fetches.
    private func expectUsable(
        _ manager: FlowableDataStateManager<String>, _ cache: InMemoryCache<String>, key: String = "key"
    ) async throws {
        // Whatever the test started (a queued nested write, say) has ended first.
        await eventually { await manager.isIdle(key, String.self) }
        let plain = HookedCallback(key: key, flowableDataStateManager: manager, cache: cache, fetched: { "after" })
        #expect(try await plain.create().requireData(from: .origin) == "after")
        await plain.create().update(newData: "updated")
        #expect(cache.value == "updated")
        let counts = await manager.registryCounts(for: key, String.self)
        #expect(counts.subscribers == 0 && counts.waiters == 0)
        #expect(WaitGraph.edgeCount(from: ObjectIdentifier(manager)) == 0)
    }

    @Test(arguments: [GettingFrom.origin, .both])
    func anOriginRequiringItsOwnKeyIsRefused(from: GettingFrom) async throws {
        let manager = FlowableDataStateManager<String>()
        let cache = InMemoryCache<String>("stale")
        let seen = Seen()
        let callback = HookedCallback(
            key: "key", flowableDataStateManager: manager, cache: cache,
            onFetch: { store, _ in
                do {
                    _ = try await store.requireData(from: from)
                    seen.add("served")
                } catch {
                    seen.add(Self.isReentrant(error) ? "refused" : "other: \(error)")
                }
                #expect(await store.getData(from: from) == nil)
                await store.refresh()
                await store.validate()
            })
        #expect(try await callback.create().requireData(from: .origin) == "fresh")
        #expect(seen.all == ["refused"])
        try await expectUsable(manager, cache)
    }

    @Test func anOriginReadingItsOwnValidCacheIsServed() async throws {
        let manager = FlowableDataStateManager<String>()
        let cache = InMemoryCache<String>("valid")
        let seen = Seen()
        let callback = HookedCallback(
            key: "key", flowableDataStateManager: manager, cache: cache,
            onFetch: { store, _ in
                seen.add(try await store.requireData(from: .both))
                seen.add(try await store.requireData(from: .cache))
            })
        await callback.create().refresh()
        #expect(seen.all == ["valid", "valid"])
        #expect(cache.value == "fresh")
        try await expectUsable(manager, cache)
    }

    @Test func anOriginWaitingForItsOwnStreamGetsAnErrorAndTheStreamEnds() async throws {
        let manager = FlowableDataStateManager<String>()
        let cache = InMemoryCache<String>()
        let seen = Seen()
        let callback = HookedCallback(
            key: "key", flowableDataStateManager: manager, cache: cache,
            onFetch: { store, _ in
                for await state in store.publish() {
                    if case .completed = state { break }
                    if case .error(_, let error) = state { seen.add(Self.isReentrant(error) ? "refused" : "other") }
                }
                seen.add("ended")
            })
        #expect(try await callback.create().requireData() == "fresh")
        #expect(seen.all == ["refused", "ended"])
        try await expectUsable(manager, cache)
    }

    @Test func anOriginUpdatingItsOwnKeyIsServed() async throws {
        let manager = FlowableDataStateManager<String>()
        let cache = InMemoryCache<String>()
        let callback = HookedCallback(
            key: "key", flowableDataStateManager: manager, cache: cache,
            onFetch: { store, _ in await store.update(newData: "from origin") })
        let value = try await callback.create().requireData()
        // The update superseded the fetch; its waiters get the update's value.
        #expect(value == "from origin")
        #expect(cache.value == "from origin")
        try await expectUsable(manager, cache)
    }

    @Test(arguments: ["update", "clear"])
    func aSaveUpdatingItsOwnKeyReturnsAndTheUpdateIsWrittenAfterIt(call: String) async throws {
        let manager = FlowableDataStateManager<String>()
        let cache = InMemoryCache<String>()
        let once = Seen()
        let callback = HookedCallback(
            key: "key", flowableDataStateManager: manager, cache: cache,
            onSave: { store, value in
                guard value == "fresh", once.all.isEmpty else { return }
                once.add("called")
                if call == "update" { await store.update(newData: "nested") } else { await store.clear() }
            })
        #expect(try await callback.create().requireData() == "fresh")
        // The nested write kept its place in the queue: it is written right after the save returned.
        let expected: String? = call == "update" ? "nested" : nil
        await eventually { cache.writes.count >= 2 }
        #expect(Array(cache.writes.prefix(2)) == ["fresh", expected])
        if call == "update" {
            let recorder = StateRecorder(callback.create().publish())
            try await recorder.waitForLatest { $0.isCompleted && $0.content == "nested" }
            recorder.cancel()
        }
        try await expectUsable(manager, cache)
    }

    @Test func anUpdatesSaveUpdatingItsOwnKeyReturns() async throws {
        let manager = FlowableDataStateManager<String>()
        let cache = InMemoryCache<String>()
        let callback = HookedCallback(
            key: "key", flowableDataStateManager: manager, cache: cache,
            onSave: { store, value in
                if value == "outer" { await store.update(newData: "inner") }
            })
        await callback.create().update(newData: "outer")
        await eventually { cache.writes.count == 2 }
        #expect(cache.writes == ["outer", "inner"])
        try await expectUsable(manager, cache)
    }

    @Test func aSaveReadingItsOwnStaleKeyFromTheOriginGetsNothingInsteadOfWaiting() async throws {
        let manager = FlowableDataStateManager<String>()
        let cache = InMemoryCache<String>("stale")
        let seen = Seen()
        let callback = HookedCallback(
            key: "key", flowableDataStateManager: manager, cache: cache,
            onSave: { store, _ in
                seen.add(await store.getData(from: .both) ?? "nil")
            })
        #expect(try await callback.create().requireData() == "fresh")
        #expect(seen.all == ["nil"])
        try await expectUsable(manager, cache)
    }

    @Test func aCycleAcrossTwoKeysIsRefusedAndBothKeysStayUsable() async throws {
        let manager = FlowableDataStateManager<String>()
        let cache1 = InMemoryCache<String>()
        let cache2 = InMemoryCache<String>()
        let one = LockedValue<HookedCallback?>(nil)
        let two = HookedCallback(
            key: "two", flowableDataStateManager: manager, cache: cache2,
            onFetch: { _, _ in
                // 2 needs 1.
                if let one = one.withLock({ $0 }) { _ = try await one.create().requireData() }
            })
        one.withLock {
            $0 = HookedCallback(
                key: "one", flowableDataStateManager: manager, cache: cache1,
                onFetch: { _, _ in _ = try await two.create().requireData() })  // 1 needs 2.
        }
        let first = try #require(one.withLock { $0 })
        await #expect(throws: StoreFlowableError.self) { try await first.create().requireData() }
        do {
            _ = try await first.create().requireData()
        } catch {
            #expect(Self.isReentrant(error))
        }
        try await expectUsable(manager, cache1, key: "one")
        try await expectUsable(manager, cache2, key: "two")
    }

    @Test func aChainAcrossKeysWithoutACycleIsServed() async throws {
        let manager = FlowableDataStateManager<String>()
        let leaf = HookedCallback(
            key: "leaf", flowableDataStateManager: manager, cache: InMemoryCache(), fetched: { "leaf value" })
        let seen = Seen()
        let root = HookedCallback(
            key: "root", flowableDataStateManager: manager, cache: InMemoryCache(),
            onFetch: { _, _ in seen.add(try await leaf.create().requireData()) })
        #expect(try await root.create().requireData() == "fresh")
        #expect(seen.all == ["leaf value"])
        #expect(WaitGraph.edgeCount(from: ObjectIdentifier(manager)) == 0)
    }

    @Test func anOriginThrowingItsOwnCancellationIsATypedErrorForCallersThatWereNotCancelled() async throws {
        let fixture = StoreFixture(origin: [.failure(CancellationError())])
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isError }
        guard case .error(_, let error)? = recorder.latest, case StoreFlowableError.originCancelled = error else {
            Issue.record("expected originCancelled, got \(String(describing: recorder.latest))")
            return
        }
        recorder.cancel()
        let caller = StoreFixture(origin: [.failure(CancellationError())])
        do {
            _ = try await caller.store.requireData()
            Issue.record("expected originCancelled")
        } catch StoreFlowableError.originCancelled {
        } catch {
            Issue.record("expected originCancelled, got \(error)")
        }
    }
}
