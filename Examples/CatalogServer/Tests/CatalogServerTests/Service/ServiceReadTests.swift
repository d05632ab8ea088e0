import CatalogModel
import CatalogService
import StoreFlowableTesting
import Testing

/// `GET /products/{id}` end to end: a real upstream and the service on 127.0.0.1, called over HTTP.
@Suite("Service: reading products")
struct ServiceReadTests {
    @Test(.timeLimit(.minutes(1)))
    func aMissFetchesOnceAndTheNextReadsAreServedFromTheCache() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let first = try await service.get("/products/42")
                #expect(first.status == 200)
                #expect(first.contentType?.hasPrefix("application/json") == true)
                #expect(try first.decode(Product.self) == .generated(id: 42))
                #expect(await upstream.upstream.state.stats.requests == 1)

                for _ in 0..<5 { #expect(try await service.product(42) == .generated(id: 42)) }
                #expect(await upstream.upstream.state.stats.requests == 1)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anUnknownProductIsA404InJSONAndIsAskedForAgainEachTime() async throws {
        try await UpstreamTestServer.run(productCount: 100) { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                for expectedRequests in 1...2 {
                    let answer = try await service.get("/products/101")
                    #expect(answer.status == 404)
                    #expect(answer.contentType?.hasPrefix("application/json") == true)
                    #expect(try answer.errorMessage() == "product 101 does not exist")
                    // Not cached: a product may be created later, so every read asks again.
                    #expect(await upstream.upstream.state.stats.requests == expectedRequests)
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: ["abc", "0", "-5", "1.5", "99999999999999999999999"])
    func aBadIDIsA400InJSONWithoutAnUpstreamCall(id: String) async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                for path in ["/products/\(id)", "/products/\(id)/events", "/direct/products/\(id)"] {
                    let answer = try await service.get(path)
                    #expect(answer.status == 400, "\(path)")
                    #expect(try answer.errorMessage() == "the product id must be a positive integer, not '\(id)'")
                }
                let put = try await service.call("PUT", "/products/\(id)", json: Product.generated(id: 1))
                #expect(put.status == 400)
                #expect(await upstream.upstream.state.stats.requests == 0)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anUnknownRouteIsA404InJSON() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let answer = try await service.get("/nothing/here")
                #expect(answer.status == 404)
                #expect(try answer.errorMessage() == "no route for GET /nothing/here")
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func concurrentRequestsForOneColdProductMakeOneUpstreamRequest() async throws {
        // A latency on a clock the test moves holds the one upstream request until every caller waits.
        let upstreamClock = ManualClock()
        try await UpstreamTestServer.run(control: UpstreamControl(latencyMilliseconds: 100), clock: upstreamClock) {
            upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                try await withThrowingTaskGroup(of: Product.self) { group in
                    for _ in 0..<50 { group.addTask { try await service.product(7) } }
                    await upstreamClock.sleepers(atLeast: 1)
                    // Every caller reached the store and joined the fetch before it is let go.
                    try await waitUntil("50 callers joined the fetch") {
                        try await service.metric(#"storeflowable_fetches{data_type="Product",outcome="joined"}"#)
                            == 49
                    }
                    upstreamClock.advance(by: .milliseconds(100))
                    for try await product in group { #expect(product == .generated(id: 7)) }
                }
                let stats = await upstream.upstream.state.stats
                #expect(stats.requests == 1)
                #expect(stats.idsServed == 1)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func manyColdProductsGoOutAsFewBatchRequests() async throws {
        // The batch window sleeps on a clock the test moves: 250 distinct misses make two full batches
        // of 100 at once, and the last 50 wait for the window.
        let batchClock = ManualClock()
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL, configure: { $0.batchClock = batchClock }) {
                service in
                try await withThrowingTaskGroup(of: (Int, Product).self) { group in
                    for id in 1...250 { group.addTask { (id, try await service.product(id)) } }
                    // All 250 are in: two full batches of 100 went out, and 50 ids wait for the window.
                    try await waitUntil("two batches of 100 are out and the last 50 ids wait") {
                        let dispatched = try await service.metric(#"storeflowable_batch_size_sum{data_type="Product"}"#)
                        return dispatched == 200 && service.catalog.pendingBatchKeyCount == 50
                    }
                    batchClock.advance(by: .seconds(1))
                    for try await (id, product) in group { #expect(product == .generated(id: id)) }
                }
                let stats = await upstream.upstream.state.stats
                #expect(stats.batchRequests == 3)
                #expect(stats.productRequests == 0)
                #expect(stats.distinctIdsServed == 250)
                #expect(stats.idsServed == 250)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func theBaselinesAnswerWithoutTheStore() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                // /direct calls the upstream on every request.
                for expectedRequests in 1...3 {
                    let direct = try await service.get("/direct/products/9")
                    #expect(direct.status == 200)
                    #expect(try direct.decode(Product.self) == .generated(id: 9))
                    #expect(await upstream.upstream.state.stats.productRequests == expectedRequests)
                }
                #expect(try await service.get("/direct/products/10001").status == 404)
                // /fixed never does.
                let fixed = try await service.get("/fixed/products/9")
                #expect(fixed.status == 200)
                #expect(try fixed.decode(Product.self) == .generated(id: 1))
                let health = try await service.get("/health")
                #expect(health.status == 200)
                #expect(health.text == "ok")
                #expect(await upstream.upstream.state.stats.requests == 4)
                #expect(await service.catalog.trackedKeyCount() == 0)
            }
        }
    }
}
