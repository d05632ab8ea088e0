import CatalogModel
import CatalogService
import StoreFlowableTesting
import Testing

/// Two service instances over one real PostgreSQL database (a throwaway server, `TestPostgresServer`):
/// what one writes reaches the other's subscribers, and a product both miss is fetched once.
@Suite(
    "Service: two instances over PostgreSQL", .serialized,
    .enabled(if: PostgresTestDatabase.isAvailable, PostgresTestDatabase.skipReason))
struct ServicePostgresTests {
    @Test(.timeLimit(.minutes(1)))
    func aWriteThroughOneInstanceReachesTheOthersEventStream() async throws {
        try await Self.withTwoInstances { upstream, instanceA, instanceB in
            let events = instanceB.events(of: 3)
            defer { events.close() }
            let current = try await events.next("B's product") { $0.state == .completed }
            #expect(current.product == .generated(id: 3))
            let readsBefore = await upstream.upstream.state.stats

            let renamed = Product(id: 3, name: "Renamed", priceCents: 3, description: "through A", version: 1)
            #expect(try await instanceA.call("PUT", "/products/3", json: renamed).status == 200)
            let seen = try await events.next("A's write") { $0.product?.version == 2 }
            #expect(seen.state == .completed)
            #expect(seen.product?.name == "Renamed")
            // B read it from the shared table, with no upstream call.
            #expect(try await instanceB.product(3).version == 2)
            let readsAfter = await upstream.upstream.state.stats
            #expect(readsAfter.requests == readsBefore.requests + 1)
            #expect(readsAfter.writeRequests == readsBefore.writeRequests + 1)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aProductMissedOnBothInstancesIsFetchedFromTheUpstreamOnce() async throws {
        // The upstream holds its one request until both instances are fetching.
        let upstreamClock = ManualClock()
        try await Self.withTwoInstances(upstreamClock: upstreamClock) { upstream, instanceA, instanceB in
            let requestsBefore = await upstream.upstream.state.stats.requests
            let started = #"storeflowable_fetches{data_type="Product",outcome="started"}"#
            let startedBeforeOnA = try await instanceA.metric(started) ?? 0
            let startedBeforeOnB = try await instanceB.metric(started) ?? 0
            _ = try await upstream.upstream.state.updateControl(UpstreamControlUpdate(latencyMilliseconds: 100))
            try await withThrowingTaskGroup(of: Product.self) { group in
                for instance in [instanceA, instanceB] {
                    for _ in 0..<10 { group.addTask { try await instance.product(9) } }
                }
                try await waitUntil("both instances fetch product 9") {
                    let fetchingOnA = try await instanceA.metric(started) ?? 0
                    let fetchingOnB = try await instanceB.metric(started) ?? 0
                    return fetchingOnA == startedBeforeOnA + 1 && fetchingOnB == startedBeforeOnB + 1
                }
                await upstreamClock.sleepers(atLeast: 1)
                upstreamClock.advance(by: .milliseconds(100))
                for try await product in group { #expect(product == .generated(id: 9)) }
            }
            #expect(await upstream.upstream.state.stats.requests == requestsBefore + 1)
        }
    }

    /// Runs `body` with an upstream and two instances, A and B, over one new set of tables of the shared
    /// test server, once each instance hears the other's writes.
    ///
    /// An instance serves once its listener has connected, but the listener's first reload (of every
    /// key tracked when it connected) may still be on its way, and a fetch it finds in flight is dropped
    /// and started again. So that tests can count fetches exactly, each instance first sees a write of
    /// product 1 through the other on an event stream: its listener is then past that first reload.
    ///
    /// - Parameters:
    ///   - upstreamClock: The clock of the upstream's latency (no latency until a test sets one).
    ///   - body: The test, given the upstream, A and B.
    /// - Throws: What `body` throws; why the server, the upstream or an instance failed.
    static func withTwoInstances(
        upstreamClock: ManualClock = ManualClock(),
        _ body: (UpstreamTestServer, ServiceUnderTest, ServiceUnderTest) async throws -> Void
    ) async throws {
        let url = try PostgresTestDatabase.url()
        let cacheName = PostgresTestDatabase.uniqueCacheName()
        try await UpstreamTestServer.run(clock: upstreamClock) { upstream in
            try await ServiceUnderTest.run(
                upstream: upstream.baseURL, backend: .postgres(url: url, instanceID: "a", cacheName: cacheName)
            ) { instanceA in
                try await ServiceUnderTest.run(
                    upstream: upstream.baseURL, backend: .postgres(url: url, instanceID: "b", cacheName: cacheName)
                ) { instanceB in
                    for (writer, reader) in [(instanceA, instanceB), (instanceB, instanceA)] {
                        let events = reader.events(of: 1)
                        defer { events.close() }
                        let current = try await events.next("product 1") { $0.state == .completed }
                        var changed = current.product ?? .generated(id: 1)
                        changed.name += "!"
                        let written = try await writer.call("PUT", "/products/1", json: changed).decode(Product.self)
                        _ = try await events.next("the other instance's write") { $0.product == written }
                    }
                    try await body(upstream, instanceA, instanceB)
                }
            }
        }
    }
}
