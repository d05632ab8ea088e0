import LoopbackServer
import StoreFlowable
import StoreFlowableFoundation
import Testing

/// `Loader.cancel()` over a `KeyedStore` whose origin is the loopback server: a request nobody waits for
/// any more is cancelled, down to its connection; one that another loader waits for goes on.
@MainActor
@Suite("Loader cancellation over loopback HTTP", .timeLimit(.minutes(1)))
struct LoaderCancellationOverHTTPTests {
    @Test(arguments: Transport.allCases)
    func cancellingTheOnlyLoaderClosesItsRequest(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            let users = KeyedStore(
                cache: MemoryCache<Int, User>(policy: FreshnessPolicy(freshFor: .seconds(60))),
                fetch: server.fixed(transport, "slow").fetch)
            let loader = Loader(users)
            loader.load(key: 1)
            try #require(await server.waitForRequests("slow"))
            loader.cancel()
            #expect(await server.waitForRequests("slow-closed"), "the request went on with nobody waiting for it")
            #expect(!loader.isLoading)
            #expect(loader.error == nil)
            #expect(loader.object == nil)
        }
    }

    @Test(arguments: Transport.allCases)
    func cancellingOneOfTwoLoadersLeavesTheRequestToTheOther(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            let users = KeyedStore(
                cache: MemoryCache<Int, User>(policy: FreshnessPolicy(freshFor: .seconds(60))),
                fetch: server.users(transport, path: "gated").fetch)
            let leaving = Loader(users)
            let staying = Loader(users)
            leaving.load(key: 1)
            staying.load(key: 1)
            // Both observe the key (each has its first state) before one leaves.
            try #require(await waitUntil { leaving.state != nil && staying.state != nil })
            try #require(await server.waitForRequests("gated"))
            leaving.cancel()
            server.openGate()
            try #require(await waitUntil { staying.object != nil })
            #expect(staying.object == User(id: 1, name: "user 1"))
            #expect(staying.error == nil)
            #expect(leaving.object == nil)
            #expect(leaving.error == nil)
            #expect(!leaving.isLoading)
            #expect(server.requestCount("gated") == 1)
        }
    }
}
