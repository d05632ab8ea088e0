import StoreFlowable
import StoreFlowablePostgres
import StoreFlowableTesting
import Testing

/// A store built on a `PostgresCache`: what one cache object stored is served by a new one (a new
/// client: a restarted process) without fetching, with its age.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheStoreTests {
    @Test func aRestartedCacheServesWhatTheLastOneStoredWithoutFetching() async throws {
        let name = uniqueName()
        let clock = ManualCacheClock()
        let policy = FreshnessPolicy(freshFor: .seconds(60))
        let origin = ScriptedOrigin<String>(otherwise: { .success("fetched-\($0)") })
        try await withClient { client in
            let cache = try await makeCache(client, name: name, policy: policy, clock: clock)
            let store = KeyedStore(cache: cache) { _ in try await origin.fetch() }
            #expect(try await store[42].requireData() == "fetched-1")
        }
        try await withClient { client in
            let cache = try await PostgresCache<Int, String>(name: name, client: client, policy: policy, clock: clock)
            let store = KeyedStore(cache: cache) { _ in try await origin.fetch() }
            #expect(try await store[42].requireData() == "fetched-1")
            #expect(origin.callCount == 1)
            // The value's age survived the restart: past freshFor it is fetched again.
            clock.advance(by: .seconds(60))
            #expect(try await store[42].requireData() == "fetched-2")
            // An invalidation through the store reaches the table.
            try await store.invalidateAll()
            #expect(try await cache.entry(forKey: 42)?.isInvalidated == true)
        }
    }
}
