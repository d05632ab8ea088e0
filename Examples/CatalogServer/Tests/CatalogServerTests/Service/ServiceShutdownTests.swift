import CatalogModel
import CatalogService
import StoreFlowableTesting
import Testing

/// A graceful shutdown lets the requests in flight finish before the service stops.
@Suite("Service: graceful shutdown")
struct ServiceShutdownTests {
    @Test(.timeLimit(.minutes(1)))
    func aSlowRequestInFlightCompletesWhenTheShutdownBegins() async throws {
        // The upstream holds every request until the test moves its clock.
        let upstreamClock = ManualClock()
        try await UpstreamTestServer.run(control: UpstreamControl(latencyMilliseconds: 1_000), clock: upstreamClock) {
            upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let url = service.endpoint.url
                async let slow = service.get("/products/21")
                await upstreamClock.sleepers(atLeast: 1)

                await service.shutDown()
                // The service stops listening: new connections are refused while the slow request waits.
                try await waitUntil("the service refuses new connections") {
                    do {
                        _ = try await ServiceClient.call("GET", url + "/health")
                        return false
                    } catch {
                        return true
                    }
                }
                upstreamClock.advance(by: .seconds(1))
                let answer = try await slow
                #expect(answer.status == 200)
                #expect(try answer.decode(Product.self) == .generated(id: 21))
            }
        }
    }
}
