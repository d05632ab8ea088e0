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
