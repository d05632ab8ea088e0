import CatalogModel
import CatalogUpstream
import Testing

/// The upstream's counts: `GET /stats` and `POST /stats/reset`.
@Suite("Upstream: stats")
struct UpstreamStatsTests {
    @Test(.timeLimit(.minutes(1)))
    func countsEachKindOfRequestAndTheIdsServed() async throws {
        try await UpstreamTestServer.run(productCount: 100) { server in
            _ = try await server.call("/products/1")
            _ = try await server.call("/products/1")
            _ = try await server.call("/products/101")  // 404: a request, no id served
            _ = try await server.call("/products?ids=1,2,3,500")
            _ = try await server.call("/products?cursor=0&limit=5")
            _ = try await server.call("PUT", "/products/2", json: Product.generated(id: 2))
            _ = try await server.call("/control")  // not a product request
            let stats = try await server.call("/stats").decode(UpstreamStats.self)
            #expect(
                stats
                    == UpstreamStats(
                        requests: 6, productRequests: 3, batchRequests: 1, pageRequests: 1, writeRequests: 1,
                        idsServed: 2 + 3 + 5, distinctIdsServed: 5))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func requestsRefusedBeforeBeingServedAreCountedApart() async throws {
        try await UpstreamTestServer.run(productCount: 100) { server in
            _ = try await server.call("/products/1")
            #expect(try await server.call("/products/abc").status == 400)
            #expect(try await server.call("/products?ids=1,x").status == 400)
            #expect(try await server.call("/products?limit=0").status == 400)
            #expect(try await server.call("PUT", "/products/2", body: "{").status == 400)
            #expect(try await server.call("PUT", "/products/2", json: Product.generated(id: 3)).status == 400)
            #expect(try await server.call("/products/1/name").status == 404)  // no such route: not counted
            #expect(try await server.call("/control").status == 200)  // not a product request
            let stats = try await server.call("/stats").decode(UpstreamStats.self)
            #expect(
                stats
                    == UpstreamStats(
                        requests: 1, productRequests: 1, idsServed: 1, distinctIdsServed: 1, rejectedRequests: 5))
            // The reset zeroes them too.
            #expect(try await server.call("POST", "/stats/reset").decode(UpstreamStats.self) == UpstreamStats())
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aResetZeroesTheCountsAndCountingGoesOn() async throws {
        try await UpstreamTestServer.run { server in
            _ = try await server.call("/products/1")
            _ = try await server.call("/products?ids=1,2")
            #expect(try await server.call("/stats").decode(UpstreamStats.self).requests == 2)

            let reset = try await server.call("POST", "/stats/reset")
            #expect(reset.status == 200)
            #expect(try reset.decode(UpstreamStats.self) == UpstreamStats())
            #expect(try await server.call("/stats").decode(UpstreamStats.self) == UpstreamStats())

            _ = try await server.call("/products/9")
            #expect(
                try await server.call("/stats").decode(UpstreamStats.self)
                    == UpstreamStats(requests: 1, productRequests: 1, idsServed: 1, distinctIdsServed: 1))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func requestsFailedByAFaultAreCountedButServeNothing() async throws {
        let outage = UpstreamControl(latencyMilliseconds: 0, outage: true)
        // `throws` spelled out: the closure's only `try`s are inside `#expect`, which the inference misses.
        try await UpstreamTestServer.run(control: outage) { server throws in
            #expect(try await server.call("/products/1").status == 503)
            #expect(try await server.call("/products?ids=1,2").status == 503)
            #expect(
                await server.upstream.state.stats
                    == UpstreamStats(requests: 2, productRequests: 1, batchRequests: 1))
        }
    }
}
