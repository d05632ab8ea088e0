import CatalogModel
import CatalogService
import Testing

/// `GET /metrics`: Prometheus text with the stores' events and the service's own counts.
@Suite("Service: metrics")
struct ServiceMetricsTests {
    @Test(.timeLimit(.minutes(1)))
    func metricsCountTheStoresEventsAndTheServicesRequests() async throws {
        try await UpstreamTestServer.run(productCount: 100) { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                _ = try await service.product(1)
                _ = try await service.product(1)
                _ = try await service.get("/products/101")
                _ = try await service.get("/products/abc")

                let answer = try await service.get("/metrics")
                #expect(answer.status == 200)
                #expect(answer.contentType?.hasPrefix("text/plain; version=0.0.4") == true)
                let expected: [(String, Double)] = [
                    (#"storeflowable_cache_reads{data_type="Product",result="miss"}"#, 2),
                    (#"storeflowable_cache_reads{data_type="Product",result="hit_fresh"}"#, 1),
                    (#"storeflowable_fetches{data_type="Product",outcome="started"}"#, 2),
                    (#"storeflowable_fetches{data_type="Product",outcome="succeeded"}"#, 1),
                    (#"storeflowable_fetches{data_type="Product",outcome="failed"}"#, 1),
                    (#"storeflowable_batch_size_count{data_type="Product"}"#, 2),
                    (#"catalog_upstream_requests_total{kind="product",outcome="success"}"#, 1),
                    (#"catalog_upstream_requests_total{kind="product",outcome="failure"}"#, 1),
                    (#"catalog_http_requests_total{route="/products/{id}",method="GET",status="200"}"#, 2),
                    (#"catalog_http_requests_total{route="/products/{id}",method="GET",status="404"}"#, 1),
                    (#"catalog_http_requests_total{route="/products/{id}",method="GET",status="400"}"#, 1),
                    ("catalog_event_streams_open", 0),
                    // The 404 of product 101 is remembered for subscribers, until the manager's limit.
                    ("catalog_store_tracked_keys", 1),
                ]
                let samples = Dictionary(
                    answer.text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
                        line.lastIndex(of: " ").flatMap { space in
                            Double(line[line.index(after: space)...]).map { (String(line[..<space]), $0) }
                        }
                    }, uniquingKeysWith: { first, _ in first })
                for (name, value) in expected { #expect(samples[name] == value, "\(name)") }
                #expect(answer.text.contains("# TYPE catalog_http_request_duration_seconds histogram"))
            }
        }
    }
}
