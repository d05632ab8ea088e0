import Foundation
import LoopbackServer
import Observation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

/// `Loader` over a `KeyedStore` whose origin is the loopback server: many loaders share one request,
/// and a cached value is shown at once and replaced when the server answers.
@MainActor
@Suite("Loader over loopback HTTP", .timeLimit(.minutes(1)))
struct LoaderOverHTTPTests {
    static let policy = FreshnessPolicy(freshFor: .seconds(10), staleWhileRevalidate: .seconds(60))

    @Test(arguments: Transport.allCases)
    func aThousandLoadersOfOneKeySendOneRequest(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            let users = KeyedStore(
                cache: MemoryCache<Int, User>(policy: Self.policy), fetch: server.users(transport, path: "gated").fetch)
            let loaders = (0..<1_000).map { _ in Loader(users) }
            for loader in loaders { loader.load(key: 1) }
            #expect(await server.waitForRequests("gated"))
            server.openGate()
            for loader in loaders {
                try #require(await waitUntil { loader.object != nil && !loader.isLoading })
            }
            #expect(Set(loaders.compactMap { $0.object?.name }) == ["user 1"])
            #expect(server.requestCount("gated") == 1)
        }
    }

    @Test(arguments: Transport.allCases)
    func aStaleValueInAMemoryCacheIsShownAtOnceThenReplaced(transport: Transport) async throws {
        let clock = ManualCacheClock()
        let cache = MemoryCache<Int, User>(policy: Self.policy, clock: clock)
        cache.setEntry(
            CacheEntry(value: User(id: 1, name: "cached"), storedAt: clock.now.advanced(by: .seconds(-30))), forKey: 1)
        try await showsTheCachedValueThenTheServers(cache: cache, transport: transport)
    }

    @Test(arguments: Transport.allCases)
    func aStaleValueInADiskCacheIsShownAtOnceThenReplaced(transport: Transport) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loopback-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualCacheClock()
        let cache = try DiskCache<Int, User>(name: "users", directory: directory, policy: Self.policy, clock: clock)
        try await cache.setEntry(
            CacheEntry(value: User(id: 1, name: "cached"), storedAt: clock.now.advanced(by: .seconds(-30))), forKey: 1)
        try await showsTheCachedValueThenTheServers(cache: cache, transport: transport)
        // The server's value was written to disk: a new cache over the same folder reads it.
        let reopened = try DiskCache<Int, User>(name: "users", directory: directory, policy: Self.policy, clock: clock)
        let entry = try await reopened.entry(forKey: 1)
        #expect(entry?.value.name == "user 1")
    }

    /// Loads user 1 through a loader over `cache` with the server's `/gated` route as origin: the cached
    /// value must show before the server answers, and the server's value after.
    private func showsTheCachedValueThenTheServers<Cache: KeyedCache<Int, User>>(cache: Cache, transport: Transport)
        async throws
    {
        try await LoopbackServer.run { server in
            let loader = Loader(KeyedStore(cache: cache, fetch: server.users(transport, path: "gated").fetch))
            let shown = ObservedHistory { loader.object?.name }
            loader.load(key: 1)
            try #require(await waitUntil { shown.values.last == "cached" })
            #expect(await server.waitForRequests("gated"))
            #expect(loader.isLoading, "the refresh of the stale value is not shown as loading")
            server.openGate()
            try #require(await waitUntil { shown.values.last == "user 1" })
            #expect(shown.values == [nil, "cached", "user 1"])
            #expect(!loader.isLoading)
            #expect(loader.error == nil)
        }
    }
}
