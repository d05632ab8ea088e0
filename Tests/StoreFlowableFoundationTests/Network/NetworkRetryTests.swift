import Foundation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

@testable import StoreFlowableFoundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `NetworkLoaderError` advises a retry policy, `Retry-After` included, and a `SimpleNetworkLoader`
/// retried through a store.
@Suite("Network retries", .timeLimit(.minutes(1)))
struct NetworkRetryTests {
    private static func status(_ code: Int, retryAfter: String? = nil) -> NetworkLoaderError {
        .unacceptableStatus(code: code, headers: retryAfter.map { ["retry-after": $0] } ?? [:], body: Data())
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func transientStatusesAreRetried(code: Int) {
        #expect(Self.status(code).retryAdvice == .retry)
    }

    @Test(arguments: [304, 400, 401, 403, 404, 409, 422, 501, 505])
    func otherStatusesAreNot(code: Int) {
        #expect(Self.status(code).retryAdvice == .doNotRetry)
        #expect(Self.status(code, retryAfter: "5").retryAdvice == .doNotRetry)
    }

    @Test func transportFailuresAreRetriedAndContentFailuresAreNot() {
        #expect(NetworkLoaderError.timedOut.retryAdvice == .retry)
        #expect(NetworkLoaderError.connectionRefused.retryAdvice == .retry)
        #expect(NetworkLoaderError.transportFailed(underlying: URLError(.networkConnectionLost)).retryAdvice == .retry)
        #expect(
            NetworkLoaderError.decodingFailed(underlying: URLError(.cannotDecodeRawData)).retryAdvice == .doNotRetry)
        #expect(NetworkLoaderError.invalidRequest(underlying: URLError(.badURL)).retryAdvice == .doNotRetry)
        #expect(NetworkLoaderError.bodyTooLarge(limit: 1).retryAdvice == .doNotRetry)
    }

    @Test func retryAfterSecondsIsTheServersDelay() {
        #expect(Self.status(503, retryAfter: "120").retryAdvice == .retryAfter(.seconds(120)))
        #expect(Self.status(429, retryAfter: " 0 ").retryAdvice == .retryAfter(.zero))
        #expect(Self.status(429, retryAfter: "99999999999999999999999").retryAdvice == .retryAfter(.seconds(Int64.max)))
    }

    @Test func retryAfterDatesCountFromNow() {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:50:07 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .zero)
        #expect(RetryAfter.delay(from: "Sat, 05 Nov 1994 08:49:37 GMT", now: now) == .zero)
        #expect(
            RetryAfter.delay(from: "Tue, 29 Feb 2000 00:00:00 GMT", now: Date(timeIntervalSince1970: 951_782_400))
                == .zero)
        #expect(
            RetryAfter.delay(from: "Wed, 01 Mar 2000 00:00:00 GMT", now: Date(timeIntervalSince1970: 951_782_400))
                == .seconds(86_400))
    }

    @Test(arguments: [
        "", "soon", "-5", "1.5", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
    ])
    func anUnreadableRetryAfterFallsBackToTheBackoff(value: String) {
        #expect(RetryAfter.delay(from: value, now: Date()) == nil)
        #expect(Self.status(503, retryAfter: value).retryAdvice == .retry)
    }

    private struct Fixture {
        let clock = ManualClock()
        let transport: FakeTransport
        let store: KeyedStore<MemoryCache<Int, String>>

        init(method: String, answer: @escaping @Sendable (Int) -> FakeTransport.Answer) {
            let calls = LockedValue(0)
            transport = FakeTransport { _ in
                answer(
                    calls.withLock {
                        $0 += 1; return $0
                    })
            }
            let loader = SimpleNetworkLoader<Int, String>(transport: transport) { id in
                var request = URLRequest(url: testURL("http://127.0.0.1:9/users/\(id)"))
                request.httpMethod = method
                return request
            } decode: { data, _ in
                String(decoding: data, as: UTF8.self)
            }
            let policy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(100), jitter: .none)
            let manager = FlowableDataStateManager<Int>(fetchPolicy: FetchPolicy(retry: policy, clock: clock))
            store = KeyedStore(cache: MemoryCache(), manager: manager, fetch: loader.fetch)
        }
    }

    @Test func aGetAnswered503IsRetriedUntilItSucceeds() async throws {
        let fixture = Fixture(method: "GET") { call in
            call < 3 ? .respond(.status(503, headers: ["Retry-After": "1"])) : .respond(.status(200, "Ada"))
        }
        let store = fixture.store
        let caller = Task { try await store[1].requireData() }
        for expected in 1...2 {
            await fixture.clock.sleepers(atLeast: 1)
            #expect(fixture.transport.sent.count == expected)
            fixture.clock.advance(by: .seconds(1))
        }
        #expect(try await caller.value == "Ada")
        #expect(fixture.transport.sent.count == 3)
    }

    @Test(arguments: ["POST", "PATCH"])
    func aRequestThatIsNotIdempotentIsNeverSentTwice(method: String) async throws {
        let fixture = Fixture(method: method) { _ in .fail(NetworkLoaderError.timedOut) }
        await #expect(throws: NetworkLoaderError.self) { try await fixture.store[1].requireData() }
        #expect(fixture.transport.sent.count == 1)
        #expect(fixture.clock.sleeperCount == 0)
    }

    @Test(arguments: ["GET", "PUT", "DELETE"])
    func idempotentMethodsAreRetried(method: String) async throws {
        let fixture = Fixture(method: method) { call in
            call == 1 ? .fail(NetworkLoaderError.timedOut) : .respond(.status(200, "Ada"))
        }
        let store = fixture.store
        let caller = Task { try await store[1].requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        fixture.clock.advance(by: .milliseconds(100))
        #expect(try await caller.value == "Ada")
        #expect(fixture.transport.sent.count == 2)
    }
}
