import CatalogModel
import CatalogService
import Testing

/// `GET /products/{id}/events`: the store's states as server-sent events, and what a client leaving
/// leaves behind (nothing).
@Suite("Service: event streams")
struct ServiceEventStreamTests {
    @Test(.timeLimit(.minutes(1)))
    func aStreamStartsLoadingThenCompletes() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let events = service.events(of: 11)
                defer { events.close() }
                let first = try await events.next("the first state")
                let second = try await events.next("the product")
                #expect(first == ProductEvent(state: .loading, product: nil))
                #expect(second == ProductEvent(state: .completed, product: .generated(id: 11)))
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aStreamOfAnUnknownProductReportsTheError() async throws {
        try await UpstreamTestServer.run(productCount: 100) { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let events = service.events(of: 101)
                defer { events.close() }
                let failed = try await events.next("the error") { $0.state == .error }
                #expect(failed == ProductEvent(state: .error, product: nil, error: "product 101 does not exist"))
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aClientThatDisconnectsReleasesItsSubscription() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let streams = (1...20).map { service.events(of: $0) }
                for (index, stream) in streams.enumerated() {
                    let event = try await stream.next("product \(index + 1)") { $0.state == .completed }
                    #expect(event.product == .generated(id: index + 1))
                }
                #expect(await service.catalog.trackedKeyCount() == 20)
                #expect(try await service.metric("catalog_event_streams_open") == 20)

                for stream in streams { stream.close() }
                try await waitUntil("every subscription is released") {
                    await service.catalog.trackedKeyCount() == 0
                }
                try await waitUntil("every stream is counted closed") {
                    try await service.metric("catalog_event_streams_open") == 0
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aGracefulShutdownEndsOpenStreams() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL) { service in
                let events = service.events(of: 12)
                defer { events.close() }
                _ = try await events.next("the product") { $0.state == .completed }
                await service.shutDown()
                // The response ends: the client is not left waiting, and the shutdown does not wait for it.
                #expect(try await events.ended())
            }
        }
    }
}
