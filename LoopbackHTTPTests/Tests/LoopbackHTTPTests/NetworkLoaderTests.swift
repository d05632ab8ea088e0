import Foundation
import LoopbackServer
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `SimpleNetworkLoader` against a real HTTP server on loopback, through each transport.
@Suite("SimpleNetworkLoader over loopback HTTP", .timeLimit(.minutes(1)))
struct NetworkLoaderTests {
    @Test(arguments: Transport.allCases)
    func a200WithJSONIsDecoded(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            let user = try await server.users(transport).fetch(7)
            #expect(user == User(id: 7, name: "user 7"))
            #expect(server.requestCount("users") == 1)
        }
    }

    @Test(arguments: Transport.allCases, [("not-modified", 304), ("missing", 404), ("broken", 500)])
    func aStatusOutside2xxIsATypedErrorWithItsCode(transport: Transport, route: (String, Int)) async throws {
        try await LoopbackServer.run { server in
            do {
                _ = try await server.fixed(transport, route.0).fetch(1)
                Issue.record("\(route.0) was decoded")
            } catch NetworkLoaderError.unacceptableStatus(let code, let headers, let body) {
                #expect(code == route.1)
                if route.1 == 404 {
                    #expect(String(decoding: body, as: UTF8.self) == "no such user")
                    #expect(headers["content-type"] == "text/plain")
                }
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func aBodyThatIsNotJSONIsADecodingError(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            await #expect {
                _ = try await server.fixed(transport, "not-json").fetch(1)
            } throws: { error in
                guard case NetworkLoaderError.decodingFailed = error else { return false }
                return true
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func aSlowResponseCancelledByTheCallerEndsPromptlyWithCancellationError(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            let api = server.fixed(transport, "slow")
            let caller = Task { try await api.fetch(1) }
            try #require(await server.waitForRequests("slow"))
            let cancelled = ContinuousClock.now
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }
            #expect(ContinuousClock.now - cancelled < LoopbackServer.slowDelay / 2, "the cancelled request ran on")
            #expect(await server.waitForRequests("slow-closed"), "the server did not see the connection closed")
        }
    }

    @Test(arguments: Transport.allCases)
    func aRequestPastItsTimeoutIsTimedOut(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            let started = ContinuousClock.now
            await #expect {
                _ = try await server.fixed(transport, "slow", timeout: 1).fetch(1)
            } throws: { error in
                guard case NetworkLoaderError.timedOut = error else { return false }
                return true
            }
            #expect(ContinuousClock.now - started < LoopbackServer.slowDelay)
        }
    }

    @Test(arguments: Transport.allCases)
    func aTimeoutUnderASecondIsKeptToTheMillisecond(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            // `/late` answers in 0.1 s: well within 0.9 s, but not within a timeout rounded down to 0 s.
            // (URLSessionTransport rounds it up to 1 s on Linux, whose URLSession rounded it down to 0.)
            let user = try await server.fixed(transport, "late", timeout: 0.9).fetch(1)
            #expect(user.name == "late")
        }
    }

    /// A HEAD's and a 304's `Content-Length` describe the resource (larger than the bound here), not a
    /// body: neither is too large.
    @Test(arguments: Transport.allCases)
    func headersOfALargeResourceWithoutABodyAreNotTooLarge(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            let client = transport.make()
            var head = URLRequest(url: try #require(URL(string: "\(server.baseURL)/large")))
            head.httpMethod = "HEAD"
            let headResponse = try await client.send(head, maxBodySize: 1_000)
            #expect(headResponse.statusCode == 200)
            #expect(headResponse.headers["content-length"] == "\(LoopbackServer.largeBodySize)")
            #expect(headResponse.body.isEmpty)

            let conditional = URLRequest(url: try #require(URL(string: "\(server.baseURL)/not-modified-large")))
            let notModified = try await client.send(conditional, maxBodySize: 1_000)
            #expect(notModified.statusCode == 304)
            #expect(notModified.body.isEmpty)
        }
    }

    @Test(arguments: Transport.allCases)
    func aPortNobodyListensOnIsARefusedConnection(transport: Transport) async throws {
        // Bound but not listening: connections to the port are refused by the kernel.
        let socket = try RefusingLoopbackPort()
        let port = socket.port
        let api = SimpleNetworkLoader<Int, User>(transport: transport.make()) { _ in
            guard let url = URL(string: "http://127.0.0.1:\(port)/users/1") else { throw URLError(.badURL) }
            var request = URLRequest(url: url)
            request.timeoutInterval = 2
            return request
        }
        let started = ContinuousClock.now
        await #expect {
            _ = try await api.fetch(1)
        } throws: { error in
            guard case NetworkLoaderError.connectionRefused = error else { return false }
            return true
        }
        // AsyncHTTPClient retries connecting until the request's deadline (its pool's
        // `retryConnectionEstablishment`, on by default), then reports the refusal.
        let reportedWithin: Duration = transport == .urlSession ? .seconds(1) : .seconds(3)
        #expect(ContinuousClock.now - started < reportedWithin)
        withExtendedLifetime(socket) {}
    }

    @Test(arguments: Transport.allCases)
    func aBodyLargerThanTheBoundIsRefused(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            let limit = LoopbackServer.largeBodySize / 4
            await #expect {
                _ = try await server.fixed(transport, "large", maxBodySize: limit).fetch(1)
            } throws: { error in
                guard case NetworkLoaderError.bodyTooLarge(let reported) = error else { return false }
                return reported == limit
            }
            // Under the bound, the same body is read and decoded.
            let user = try await server.fixed(transport, "large", maxBodySize: 2 * LoopbackServer.largeBodySize).fetch(
                1)
            #expect(user.name.count == LoopbackServer.largeBodySize)
        }
    }

    @Test(arguments: Transport.allCases)
    func aThousandConcurrentLoadsOfOneKeySendOneRequest(transport: Transport) async throws {
        try await LoopbackServer.run { server in
            let users = KeyedStore(
                cache: MemoryCache<Int, User>(policy: FreshnessPolicy(freshFor: .seconds(60))),
                fetch: server.users(transport, path: "gated").fetch)
            let values = try await withThrowingTaskGroup(of: User.self) { group in
                for _ in 0..<1_000 {
                    group.addTask { try await users[1].requireData() }
                }
                #expect(await server.waitForRequests("gated"))
                server.openGate()
                return try await group.reduce(into: [User]()) { $0.append($1) }
            }
            #expect(values.count == 1_000)
            #expect(Set(values.map(\.name)) == ["user 1"])
            #expect(server.requestCount("gated") == 1)
        }
    }
}
