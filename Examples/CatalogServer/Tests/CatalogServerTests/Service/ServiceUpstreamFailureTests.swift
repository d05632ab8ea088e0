import CatalogModel
import CatalogService
import Foundation
import Hummingbird
import StoreFlowableTesting
import Synchronization
import Testing

/// What the service answers when the upstream breaks its interface or cannot be reached: a typed JSON
/// error with the right status (502 for an answer it cannot use, 503 when there is none), never a crash
/// and never a wrong product.
@Suite("Service: a broken or missing upstream")
struct ServiceUpstreamFailureTests {
    /// The JSON of product `id`, as the real upstream writes it.
    static func productJSON(_ id: Int) throws -> String {
        String(decoding: try JSONEncoder().encode(Product.generated(id: id)), as: UTF8.self)
    }

    @Test(.timeLimit(.minutes(1)))
    func answersTheServiceCannotUseAre502s() async throws {
        let otherProduct = try Self.productJSON(8)
        try await FakeUpstream.run(routes: { router in
            router.get("products/1") { _, _ in FakeUpstream.answer("<html>not JSON</html>") }
            router.get("products/2") { _, _ in FakeUpstream.answer(otherProduct) }
            router.get("products/3") { _, _ in FakeUpstream.answer("{}", status: .init(code: 418)) }
            router.get("products") { _, _ in
                // Out of order: the service must not cache it as a page.
                FakeUpstream.answer(#"{"products": [], "nextCursor": 0}"#)
            }
        }) { upstream in
            try await ServiceUnderTest.run(upstream: upstream) { service in
                for path in ["/products/1", "/products/2", "/products/3", "/products"] {
                    let answer = try await service.get(path)
                    #expect(answer.status == 502, "\(path)")
                    #expect(try answer.errorMessage() == "the upstream answered something unexpected", "\(path)")
                }
                let direct = try await service.get("/direct/products/1")
                #expect(direct.status == 502)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aSlowUpstreamShedsRequestsBeyondItsQueueAsTyped503s() async throws {
        // The upstream's latency sleeps on a clock the test moves, so its requests hold their permits
        // until the test lets them go. One permit and one place in line: of three misses sent as three
        // requests, one runs, one waits and one is turned away at once.
        let upstreamClock = ManualClock()
        try await UpstreamTestServer.run(control: UpstreamControl(latencyMilliseconds: 100), clock: upstreamClock) {
            upstream in
            try await ServiceUnderTest.run(
                upstream: upstream.baseURL,
                configure: {
                    $0.batchSize = 1
                    $0.upstreamConcurrency = 1
                    $0.upstreamQueueLimit = 1
                }
            ) { service in
                let first = Task { try await service.get("/products/1") }
                await upstreamClock.sleepers(atLeast: 1)
                let statuses = try await withThrowingTaskGroup(of: ServiceClient.Answer.self) { group in
                    for id in [2, 3] { group.addTask { try await service.get("/products/\(id)") } }
                    // The one turned away answers while the upstream still holds the first request.
                    let shed = try await group.next()
                    #expect(shed?.status == 503)
                    #expect(try shed?.errorMessage() == "the upstream is unavailable and no cached value can be served")
                    upstreamClock.advance(by: .milliseconds(100))
                    #expect(try await first.value.status == 200)
                    // The one that waited in line goes out now.
                    await upstreamClock.sleepers(atLeast: 1)
                    upstreamClock.advance(by: .milliseconds(100))
                    var statuses = [shed?.status]
                    for try await answer in group { statuses.append(answer.status) }
                    return statuses
                }
                #expect(statuses == [503, 200])
                // Never retried: the upstream saw the two requests that were let in.
                #expect(await upstream.upstream.state.stats.requests == 2)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aFailingUpstreamIsA503AfterTheRetries() async throws {
        let calls = CallCounter()
        try await FakeUpstream.run(routes: { router in
            router.get("products/{id}") { _, _ in
                calls.increment()
                return FakeUpstream.answer(#"{"error": "boom"}"#, status: .internalServerError)
            }
        }) { upstream in
            let retryClock = ManualClock()
            try await ServiceUnderTest.run(upstream: upstream, configure: { $0.retryClock = retryClock }) {
                service in
                async let answer = service.get("/products/4")
                await retryClock.sleepers(atLeast: 1)
                retryClock.advance(by: .milliseconds(50))
                await retryClock.sleepers(atLeast: 1)
                retryClock.advance(by: .milliseconds(100))
                let failed = try await answer
                #expect(failed.status == 503)
                #expect(try failed.errorMessage() == "the upstream is unavailable and no cached value can be served")
                #expect(calls.count == 3)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anUpstreamThatIsNotThereIsA503() async throws {
        let closed = try RefusingLoopbackPort()
        try await ServiceUnderTest.run(upstream: "http://127.0.0.1:\(closed.port)", configure: { $0.retry = .never }) {
            service in
            for path in ["/products/1", "/products", "/direct/products/1"] {
                let answer = try await service.get(path)
                #expect(answer.status == 503, "\(path)")
                #expect(try answer.errorMessage() == "the upstream is unavailable and no cached value can be served")
            }
            let put = try await service.call("PUT", "/products/1", json: Product.generated(id: 1))
            #expect(put.status == 503)
            // The service itself is fine.
            #expect(try await service.get("/health").status == 200)
        }
    }
}

/// Counts calls from any thread.
final class CallCounter: Sendable {
    private let calls = Mutex(0)

    /// Counts one call.
    func increment() {
        calls.withLock { $0 += 1 }
    }

    /// The calls counted.
    var count: Int { calls.withLock { $0 } }
}
