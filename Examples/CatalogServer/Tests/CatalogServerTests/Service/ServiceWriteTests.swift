import CatalogModel
import CatalogService
import Testing

/// `PUT /products/{id}` end to end: the upstream stores the product, then the store is updated.
@Suite("Service: writing products")
struct ServiceWriteTests {
    /// Product 5 renamed, as a client sends it.
    static let renamed = Product(id: 5, name: "Renamed", priceCents: 500, description: "renamed", version: 1)

    @Test(.timeLimit(.minutes(1)))
    func aWriteIsStoredUpstreamAndTheNextReadServesItWithoutAFetch() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                #expect(try await service.product(5) == .generated(id: 5))
                let put = try await service.call("PUT", "/products/5", json: Self.renamed)
                #expect(put.status == 200)
                var stored = Self.renamed
                stored.version = 2
                #expect(try put.decode(Product.self) == stored)
                #expect(try await service.product(5) == stored)
                let stats = await upstream.upstream.state.stats
                #expect(stats.writeRequests == 1)
                #expect(stats.productRequests + stats.batchRequests == 1)
                // The upstream has it too.
                #expect(try await upstream.call("GET", "/products/5").decode(Product.self) == stored)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anOpenEventStreamSeesTheWrite() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let events = service.events(of: 5)
                defer { events.close() }
                let head = try await events.status()
                #expect(head.status == 200)
                #expect(head.contentType == "text/event-stream")
                let current = try await events.next("the current product") { $0.state == .completed }
                #expect(current.product == .generated(id: 5))

                #expect(try await service.call("PUT", "/products/5", json: Self.renamed).status == 200)
                let written = try await events.next("the written product") { $0.product?.version == 2 }
                #expect(written.state == .completed)
                #expect(written.product?.name == "Renamed")
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aWriteOlderThanTheCachedVersionDoesNotReplaceIt() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                // Two writes through the service: versions 2 and 3.
                _ = try await service.call("PUT", "/products/5", json: Self.renamed)
                var third = Self.renamed
                third.name = "Third"
                #expect(try await service.call("PUT", "/products/5", json: third).decode(Product.self).version == 3)
                #expect(try await service.product(5).name == "Third")
                #expect(await upstream.upstream.state.stats.writeRequests == 2)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func badWritesAreTypedErrorsInJSON() async throws {
        try await UpstreamTestServer.run(productCount: 100) { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let otherID = try await service.call("PUT", "/products/6", json: Self.renamed)
                #expect(otherID.status == 400)
                #expect(
                    try otherID.errorMessage() == "the body is not a valid product: its id 5 is not the path's id 6")

                let notJSON = try await service.call("PUT", "/products/5", body: "{\"id\": 5")
                #expect(notJSON.status == 400)
                #expect(try notJSON.errorMessage().hasPrefix("the body is not a valid product"))

                let tooLarge = try await service.call(
                    "PUT", "/products/5", body: String(repeating: " ", count: 128 * 1024))
                #expect(tooLarge.status == 413)
                #expect(try !tooLarge.errorMessage().isEmpty)
                #expect(await upstream.upstream.state.stats.writeRequests == 0)

                var unknown = Self.renamed
                unknown.id = 101
                let notFound = try await service.call("PUT", "/products/101", json: unknown)
                #expect(notFound.status == 404)
                #expect(try notFound.errorMessage() == "product 101 does not exist")

                _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(outage: true))
                let down = try await service.call("PUT", "/products/5", json: Self.renamed)
                #expect(down.status == 503)
                #expect(try down.errorMessage().hasPrefix("the upstream is unavailable"))
                _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(outage: false))
                // Nothing was stored by the failed writes.
                #expect(try await service.product(5) == .generated(id: 5))
            }
        }
    }
}
