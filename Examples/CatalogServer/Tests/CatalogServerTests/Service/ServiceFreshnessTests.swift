import CatalogModel
import CatalogService
import StoreFlowable
import StoreFlowableTesting
import Testing

/// The freshness policy end to end (fresh for 5 s, stale-while-revalidate 30 s more, stale-if-error
/// 300 s after `freshFor`), crossed by moving the caches' `ManualCacheClock`, and the retries, on a
/// `ManualClock`.
@Suite("Service: freshness and retries")
struct ServiceFreshnessTests {
    /// Product 3 as the upstream stores it after one write.
    static let rewritten = Product(id: 3, name: "Rewritten", priceCents: 300, description: "new", version: 1)

    @Test(.timeLimit(.minutes(1)))
    func aFreshProductIsServedWithNoUpstreamCall() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                _ = try await service.product(3)
                service.cacheClock.advance(by: .seconds(5) - .milliseconds(1))
                #expect(try await service.product(3) == .generated(id: 3))
                #expect(await upstream.upstream.state.stats.requests == 1)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func insideStaleWhileRevalidateTheStaleProductIsServedAtOnceAndOneFetchRefreshesIt() async throws {
        // The upstream's latency waits on a clock the test moves: the refresh stays in flight while the
        // stale product is served.
        let upstreamClock = ManualClock()
        try await UpstreamTestServer.run(control: UpstreamControl(latencyMilliseconds: 100), clock: upstreamClock) {
            upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                async let primed = service.product(3)
                await upstreamClock.sleepers(atLeast: 1)
                upstreamClock.advance(by: .milliseconds(100))
                #expect(try await primed.version == 1)
                async let written = upstream.call("PUT", "/products/3", json: Self.rewritten)
                await upstreamClock.sleepers(atLeast: 1)
                upstreamClock.advance(by: .milliseconds(100))
                #expect(try await written.status == 200)

                service.cacheClock.advance(by: .seconds(10))
                // Served at once, from the cache, while the one refresh waits in the upstream.
                for _ in 0..<5 { #expect(try await service.product(3) == .generated(id: 3)) }
                await upstreamClock.sleepers(atLeast: 1)
                let during = await upstream.upstream.state.stats
                #expect(during.productRequests + during.batchRequests == 2)
                let revalidating = #"storeflowable_stale_served{data_type="Product",reason="revalidating"}"#
                #expect(try await service.metric(revalidating) == 5)
                upstreamClock.advance(by: .milliseconds(100))
                try await waitUntil("the refresh is cached") {
                    try await service.product(3).name == "Rewritten"
                }
                #expect(try await service.product(3).version == 2)
                let stats = await upstream.upstream.state.stats
                #expect(stats.productRequests + stats.batchRequests == 2)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func duringAnOutageInsideStaleIfErrorTheStaleProductIsServed() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL, configure: { $0.retry = .never }) { service in
                _ = try await service.product(3)
                _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(outage: true))
                // Past the stale-while-revalidate window (35 s), inside stale-if-error (305 s).
                service.cacheClock.advance(by: .seconds(300))
                let answer = try await service.get("/products/3")
                #expect(answer.status == 200)
                #expect(try answer.decode(Product.self) == .generated(id: 3))
                // The upstream was asked, failed, and the stale value stood in.
                #expect(await upstream.upstream.state.stats.requests == 2)
                #expect(
                    try await service.metric(#"storeflowable_stale_served{data_type="Product",reason="origin_failed"}"#)
                        == 1)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func pastStaleIfErrorAnOutageIsA503InJSON() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL, configure: { $0.retry = .never }) { service in
                _ = try await service.product(3)
                _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(outage: true))
                service.cacheClock.advance(by: .seconds(305))
                let answer = try await service.get("/products/3")
                #expect(answer.status == 503)
                #expect(
                    try answer.errorMessage().hasPrefix("the upstream is unavailable and no cached value can be served")
                )
                // A cold product during the outage is the same 503.
                #expect(try await service.get("/products/4").status == 503)
                // Once the upstream is back, the product is fetched again.
                _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(outage: false))
                #expect(try await service.product(3) == .generated(id: 3))
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aFailedFetchIsRetriedAfterItsBackoffAndTheCallerGetsTheProduct() async throws {
        let retryClock = ManualClock()
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL, configure: { $0.retryClock = retryClock }) {
                service in
                _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(outage: true))
                async let answer = service.get("/products/8")
                // The first attempt failed with a 503; the fetch sleeps its backoff (50 ms).
                await retryClock.sleepers(atLeast: 1)
                #expect(await upstream.upstream.state.stats.requests == 1)
                _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(outage: false))
                retryClock.advance(by: .milliseconds(50))
                let product = try await answer
                #expect(product.status == 200)
                #expect(try product.decode(Product.self) == .generated(id: 8))
                #expect(await upstream.upstream.state.stats.requests == 2)
                #expect(try await service.metric(#"storeflowable_retries_scheduled{data_type="Product"}"#) == 1)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func retriesAreBoundedAndTheLastFailureIsA503() async throws {
        let retryClock = ManualClock()
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL, configure: { $0.retryClock = retryClock }) {
                service in
                _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(outage: true))
                async let answer = service.get("/products/8")
                await retryClock.sleepers(atLeast: 1)
                retryClock.advance(by: .milliseconds(50))
                await retryClock.sleepers(atLeast: 1)
                retryClock.advance(by: .milliseconds(100))
                #expect(try await answer.status == 503)
                // Three attempts, the configured most.
                #expect(await upstream.upstream.state.stats.requests == 3)
            }
        }
    }
}
