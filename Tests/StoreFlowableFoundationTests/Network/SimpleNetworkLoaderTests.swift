import Foundation
import StoreFlowable
import StoreFlowableFoundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private struct User: Codable, Equatable, Sendable {
    let id: Int
    let name: String
}

private struct Boom: Error {}

/// `SimpleNetworkLoader` over a fake transport: status handling, decoding, typed errors and
/// cancellation. (The loopback package repeats the network cases against a real HTTP server.)
@Suite("SimpleNetworkLoader", .timeLimit(.minutes(1)))
struct SimpleNetworkLoaderTests {
    private func loader(
        _ answer: @escaping @Sendable (URLRequest) -> FakeTransport.Answer
    ) -> (SimpleNetworkLoader<Int, User>, FakeTransport) {
        let transport = FakeTransport(answer)
        let loader = SimpleNetworkLoader<Int, User>(transport: transport) { id in
            URLRequest(url: testURL("http://127.0.0.1:9/users/\(id)"))
        }
        return (loader, transport)
    }

    @Test func a2xxJSONBodyIsDecodedFromTheKeysRequest() async throws {
        let (api, transport) = loader { _ in .respond(.status(200, #"{"id":7,"name":"Ada"}"#)) }
        #expect(try await api.fetch(7) == User(id: 7, name: "Ada"))
        #expect(transport.sent.map(\.url?.path) == ["/users/7"])
    }

    @Test(arguments: [201, 203, 299])
    func every2xxStatusIsASuccess(status: Int) async throws {
        let (api, _) = loader { _ in .respond(.status(status, #"{"id":1,"name":"A"}"#)) }
        #expect(try await api.fetch(1).id == 1)
    }

    /// A 204 has no body: it is a success, handed to the decoder like any other (a decoder that accepts
    /// an empty body makes a value of it; JSON cannot, which is a decoding error, not a status error).
    @Test func a204IsASuccessWhoseEmptyBodyGoesToTheDecoder() async throws {
        let transport = FakeTransport { _ in .respond(.status(204)) }
        let api = SimpleNetworkLoader<Int, Int>(
            transport: transport, createRequest: { id in URLRequest(url: testURL("http://127.0.0.1:9/\(id)")) },
            decode: { data, _ in data.count })
        #expect(try await api.fetch(1) == 0)
        let (json, _) = loader { _ in .respond(.status(204)) }
        await #expect {
            _ = try await json.fetch(1)
        } throws: { error in
            guard case NetworkLoaderError.decodingFailed = error else { return false }
            return true
        }
    }

    @Test(arguments: [304, 404, 500, 199, 300])
    func anyOtherStatusIsATypedErrorWithCodeHeadersAndBody(status: Int) async throws {
        let (api, _) = loader { _ in
            .respond(.status(status, "no such user", headers: ["Retry-After": "3", "X-Request-ID": "r1"]))
        }
        do {
            _ = try await api.fetch(1)
            Issue.record("a \(status) was decoded")
        } catch NetworkLoaderError.unacceptableStatus(let code, let headers, let body) {
            #expect(code == status)
            #expect(headers["retry-after"] == "3")
            #expect(headers["x-request-id"] == "r1")
            #expect(String(decoding: body, as: UTF8.self) == "no such user")
        }
    }

    @Test func anErrorBodyIsCutToTheErrorBodyLimit() async throws {
        let big = String(repeating: "x", count: NetworkLoaderError.errorBodyLimit + 10)
        let (api, _) = loader { _ in .respond(.status(500, big)) }
        do {
            _ = try await api.fetch(1)
            Issue.record("a 500 was decoded")
        } catch NetworkLoaderError.unacceptableStatus(_, _, let body) {
            #expect(body.count == NetworkLoaderError.errorBodyLimit)
        }
    }

    @Test func aBodyThatIsNotJSONIsADecodingError() async throws {
        let (api, _) = loader { _ in .respond(.status(200, "<html>maintenance</html>")) }
        await #expect {
            _ = try await api.fetch(1)
        } throws: { error in
            guard case NetworkLoaderError.decodingFailed(let underlying) = error else { return false }
            return underlying is DecodingError
        }
    }

    @Test func aRequestThatCannotBeMadeIsAnInvalidRequestAndSendsNothing() async throws {
        let transport = FakeTransport { _ in .respond(.status(200)) }
        let api = SimpleNetworkLoader<Int, User>(transport: transport) { _ in throw Boom() }
        await #expect {
            _ = try await api.fetch(1)
        } throws: { error in
            guard case NetworkLoaderError.invalidRequest(let underlying) = error else { return false }
            return underlying is Boom
        }
        #expect(transport.sent.isEmpty)
    }

    @Test func theTransportsTypedErrorsPassThrough() async throws {
        for expected in [NetworkLoaderError.timedOut, .connectionRefused, .bodyTooLarge(limit: 10)] {
            let (api, _) = loader { _ in .fail(expected) }
            do {
                _ = try await api.fetch(1)
                Issue.record("no error")
            } catch let error as NetworkLoaderError {
                #expect("\(error)" == "\(expected)")
            }
        }
    }

    @Test func anyOtherTransportErrorIsWrappedAsATransportFailure() async throws {
        let (api, _) = loader { _ in .fail(Boom()) }
        await #expect {
            _ = try await api.fetch(1)
        } throws: { error in
            guard case NetworkLoaderError.transportFailed(let underlying) = error else { return false }
            return underlying is Boom
        }
    }

    /// A transport's own `CancellationError` (an HTTP client's deadline, say) is a failure, not the
    /// caller's cancellation.
    @Test func aCancellationNobodyAskedForIsATransportFailure() async throws {
        let (api, _) = loader { _ in .fail(CancellationError()) }
        await #expect {
            _ = try await api.fetch(1)
        } throws: { error in
            guard case NetworkLoaderError.transportFailed(let underlying) = error else { return false }
            return underlying is CancellationError
        }
    }

    @Test func aCancelledCallerGetsCancellationErrorWhateverTheTransportThrows() async throws {
        for thrown: any Error in [NetworkLoaderError.transportFailed(underlying: Boom()), URLError(.cancelled), Boom()]
        {
            let (api, transport) = loader { _ in .hang(throwing: thrown) }
            let caller = Task { try await api.fetch(1) }
            while transport.sent.isEmpty { await Task.yield() }
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }
        }
    }

    @Test func aCustomDecoderGetsTheBodyAndTheKey() async throws {
        let transport = FakeTransport { _ in .respond(.status(200, "Ada")) }
        let api = SimpleNetworkLoader<Int, String>(
            transport: transport, createRequest: { id in URLRequest(url: testURL("http://127.0.0.1:9/\(id)")) },
            decode: { data, key in "\(key): \(String(decoding: data, as: UTF8.self))" })
        #expect(try await api.fetch(3) == "3: Ada")
    }

    @Test func aStoreOverTheLoaderServesTheCacheThenTheNetwork() async throws {
        let (api, transport) = loader { _ in .respond(.status(200, #"{"id":1,"name":"Ada"}"#)) }
        let users = KeyedStore(cache: MemoryCache<Int, User>(policy: .forever), fetch: api.fetch)
        #expect(try await users[1].requireData() == User(id: 1, name: "Ada"))
        #expect(try await users[1].requireData() == User(id: 1, name: "Ada"))
        #expect(transport.sent.count == 1)
    }
}
