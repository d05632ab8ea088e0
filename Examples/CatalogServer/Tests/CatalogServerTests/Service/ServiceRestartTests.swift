import CatalogModel
import CatalogService
import Foundation
import StoreFlowableTesting
import Testing

/// The SQLite cache outlives the service: a service restarted on the same folder serves what the last
/// one cached, without asking the upstream.
@Suite("Service: restarts")
struct ServiceRestartTests {
    @Test(.timeLimit(.minutes(1)))
    func aRestartedServiceServesTheCachedProductsWithoutTheUpstream() async throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("catalog-restart-test-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // One clock for both lives of the service: the products are still fresh when it restarts.
        let clock = ManualCacheClock()
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(
                upstream: upstream.baseURL, backend: .sqlite(directory: folder), cacheClock: clock
            ) {
                service in
                for id in 1...3 { _ = try await service.product(id) }
                _ = try await service.get("/products")
            }
            #expect(await upstream.upstream.state.stats.requests == 4)
            // The upstream is down: only the file can answer.
            _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(outage: true))
            try await ServiceUnderTest.run(
                upstream: upstream.baseURL, backend: .sqlite(directory: folder), cacheClock: clock,
                configure: { $0.retry = .never }
            ) { service in
                for id in 1...3 { #expect(try await service.product(id) == .generated(id: id)) }
                let page = try await service.get("/products").decode(ProductPage.self)
                #expect(page.products.map(\.id) == Array(1...20))
                #expect(try await service.get("/products/4").status == 503)
            }
            #expect(await upstream.upstream.state.stats.requests == 5)
        }
    }
}
