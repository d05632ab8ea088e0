import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// A callback whose first `needRefresh` call of a stale value blocks until the test lets it go, so a
/// read can be held between reading the cache and deciding that the value is stale.
private struct SlowVerdictCallback: StoreFlowableCallback {
    let key = "key"
    let flowableDataStateManager: FlowableDataStateManager<String>
    let cache: InMemoryCache<String>
    let origin: ScriptedOrigin<String>
    let verdicts = LockedValue(0)
    let entered = Signal()
    let release = Signal()

    func loadDataFromCache() async throws -> String? { try await cache.load() }
    func saveDataToCache(newData: String?) async throws { try await cache.save(newData) }
    func fetchDataFromOrigin() async throws -> String { try await origin.fetch() }
    func needRefresh(cachedData: String) async -> Bool {
        guard cachedData.hasPrefix("stale") else { return false }
        let isFirst = verdicts.withLock { count in
            count += 1
            return count == 1
        }
        if isFirst {
            entered.open()
            await release.wait()
        }
        return true
    }
}

/// A read that found stale data before a fetch wrote does not start a second fetch once that fetch has
/// written: the store reads again (the version check `publish()` has, for `requireData`, `getData`
/// and `validate`).
@Suite(.timeLimit(.minutes(1)))
struct StaleReadTests {
    enum Call: String, CaseIterable, Sendable { case requireData, getData, validate }

    @Test(arguments: Call.allCases)
    func aStaleReadOvertakenByAFetchReadsAgainInsteadOfFetching(call: Call) async throws {
        let callback = SlowVerdictCallback(
            flowableDataStateManager: FlowableDataStateManager(), cache: InMemoryCache("stale"),
            origin: ScriptedOrigin([.success("fresh")], otherwise: { .success("fresh-\($0)") }))
        let store = callback.create()
        // The slow reader reads "stale" and is held before its verdict.
        let slow = Task { () -> String? in
            switch call {
            case .requireData: return try? await store.requireData()
            case .getData: return await store.getData()
            case .validate:
                await store.validate()
                return try? await store.requireData(from: .cache)
            }
        }
        await callback.entered.wait()
        // Meanwhile another caller fetches and writes.
        #expect(try await store.requireData() == "fresh")
        callback.release.open()
        #expect(await slow.valueOrCancel == "fresh")
        #expect(callback.origin.callCount == 1)
    }

    @Test func aStaleReadWithNoWriteSinceStillFetches() async throws {
        let callback = SlowVerdictCallback(
            flowableDataStateManager: FlowableDataStateManager(), cache: InMemoryCache("stale"),
            origin: ScriptedOrigin([.success("fresh")]))
        let store = callback.create()
        let slow = Task { try? await store.requireData() }
        await callback.entered.wait()
        callback.release.open()
        #expect(await slow.valueOrCancel == "fresh")
        #expect(callback.origin.callCount == 1)
    }

    @Test func manyCallersWithASlowVerdictCauseOneFetch() async throws {
        // Every verdict is slow here: 200 callers read "stale" while the first fetch runs and writes.
        let callback = SlowVerdictCallback(
            flowableDataStateManager: FlowableDataStateManager(), cache: InMemoryCache("stale"),
            origin: ScriptedOrigin([], otherwise: { .success("fresh-\($0)") }))
        let store = callback.create()
        let first = Task { try? await store.requireData() }
        await callback.entered.wait()
        let others = (0..<200).map { _ in Task { try? await store.requireData() } }
        callback.release.open()
        #expect(await first.valueOrCancel == "fresh-1")
        for other in others { #expect(await other.valueOrCancel == "fresh-1") }
        #expect(callback.origin.callCount == 1)
    }
}
