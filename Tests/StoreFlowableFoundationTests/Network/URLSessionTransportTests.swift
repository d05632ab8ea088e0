import Foundation
import StoreFlowableTesting
import Testing

@testable import StoreFlowableFoundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionTransport` against a real HTTP/1.1 server on 127.0.0.1 (``LoopbackHTTPServer``): bodies
/// and headers, refused connections, the body bound, cancellation and timeouts. (The loopback package
/// repeats these at a larger scale against a Hummingbird server.)
@Suite("URLSessionTransport", .serialized, .timeLimit(.minutes(1)))
struct URLSessionTransportTests {
    /// How long a cancelled or timed-out request may take to end; the servers would wait 30 s.
    private static let prompt: Duration = .seconds(10)

    @Test func a200ResponseArrivesWithItsStatusBodyAndLowercasedHeaders() async throws {
        let body = Array(#"{"id":1,"name":"Ada"}"#.utf8)
        let head = LoopbackHTTPServer.head(
            status: 200,
            [
                ("Content-Type", "application/json"), ("X-Request-ID", "r1"), ("X-Multi", "a"), ("X-Multi", "b"),
                ("Content-Length", "\(body.count)"),
            ])
        let server = try LoopbackHTTPServer(reply: .complete(head: head, body: body))
        let response = try await URLSessionTransport().send(loopbackRequest(server.port), maxBodySize: 1_000)
        #expect(response.statusCode == 200)
        #expect(response.body == Data(body))
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["x-request-id"] == "r1")
        #expect(response.headers["x-multi"] == "a, b")
        #expect(response.headers.keys.allSatisfy { $0 == $0.lowercased() })
        #expect(await server.waitFor { _ in true } == .request("GET /users/1 HTTP/1.1"))
    }

    @Test func aBodyOfExactlyTheBoundIsRead() async throws {
        let body = [UInt8](repeating: UInt8(ascii: "b"), count: 5_000)
        let head = LoopbackHTTPServer.head(status: 200, [("Content-Length", "5000")])
        let server = try LoopbackHTTPServer(reply: .complete(head: head, body: body))
        let response = try await URLSessionTransport().send(loopbackRequest(server.port), maxBodySize: 5_000)
        #expect(response.body.count == 5_000)
    }

    @Test func a404ThroughTheLoaderIsATypedStatusErrorWithItsBody() async throws {
        let body = Array("no such user".utf8)
        let head = LoopbackHTTPServer.head(status: 404, [("Content-Length", "\(body.count)"), ("Retry-After", "3")])
        let server = try LoopbackHTTPServer(reply: .complete(head: head, body: body))
        let port = server.port
        let api = SimpleNetworkLoader<Int, String>(transport: URLSessionTransport()) { id in
            loopbackRequest(port, "/users/\(id)")
        }
        do {
            _ = try await api.fetch(1)
            Issue.record("a 404 was decoded")
        } catch NetworkLoaderError.unacceptableStatus(let code, let headers, let body) {
            #expect(code == 404)
            #expect(headers["retry-after"] == "3")
            #expect(String(decoding: body, as: UTF8.self) == "no such user")
        }
    }

    @Test func aPortNobodyListensOnIsARefusedConnection() async throws {
        // Bound but not listening: the kernel refuses connections to the port.
        let socket = try RefusingLoopbackPort()
        await #expect {
            _ = try await URLSessionTransport().send(loopbackRequest(socket.port), maxBodySize: 1_000)
        } throws: { error in
            isLoaderError(error, .connectionRefused)
        }
    }

    /// The server took the connection, so it was not refused: the empty reply is a transport failure.
    @Test func aServerThatClosesWithoutAnsweringIsATransportFailure() async throws {
        let server = try LoopbackHTTPServer(reply: .complete(head: "", body: []))
        await #expect {
            _ = try await URLSessionTransport().send(loopbackRequest(server.port), maxBodySize: 1_000)
        } throws: { error in
            guard case NetworkLoaderError.transportFailed = error else { return false }
            return true
        }
    }

    /// The body never ends (the server stops at 8 GiB): a transport that read it all before checking
    /// would run out of time.
    @Test func aBodyLongerThanTheBoundStopsTheDownload() async throws {
        let server = try LoopbackHTTPServer(
            reply: .headThenEndlessBody(head: LoopbackHTTPServer.head(status: 200)), maxConnections: 1)
        let started = ContinuousClock.now
        await #expect {
            _ = try await URLSessionTransport().send(loopbackRequest(server.port), maxBodySize: 100_000)
        } throws: { error in
            isLoaderError(error, .bodyTooLarge(limit: 100_000))
        }
        #expect(ContinuousClock.now - started < Self.prompt)
        // The client closes the connection. Not at once on Linux: FoundationNetworking reads on while the
        // cancellation waits for its work queue (from a few MB to hundreds over loopback, depending on
        // the machine's load), which is why only the closing is checked, not how much was sent. Under
        // ThreadSanitizer that queue never catches up with this server, so the cancellation lands only
        // when the body ends (gdb: `URLSessionTask.cancel()` waiting in the work queue's `sync` while
        // the queue reads; 8 GiB in 25 s in two runs of three): the closing is checked without it.
        #if canImport(FoundationNetworking)
            if isRunningUnderThreadSanitizer { return }
        #endif
        let left = await server.waitFor { if case .clientLeft = $0 { true } else { false } }
        guard case .clientLeft(let written) = left else {
            Issue.record("the client never left: \(String(describing: left))")
            return
        }
        #expect(written > 100_000)
    }

    /// The body never comes: only the `Content-Length` can have told the transport it is too long.
    @Test func aContentLengthOverTheBoundIsRejectedBeforeTheBody() async throws {
        let head = LoopbackHTTPServer.head(status: 200, [("Content-Length", "50000000")])
        let server = try LoopbackHTTPServer(reply: .headThenWait(head: head), maxConnections: 1)
        let started = ContinuousClock.now
        await #expect {
            _ = try await URLSessionTransport().send(loopbackRequest(server.port), maxBodySize: 1_000)
        } throws: { error in
            isLoaderError(error, .bodyTooLarge(limit: 1_000))
        }
        // Promptly, not at the request's 20 s timeout (where FoundationNetworking on Linux ended it
        // before the transport cancelled the task itself).
        #expect(ContinuousClock.now - started < Self.prompt)
        #expect(await server.waitFor { $0 == .clientLeft(bodyBytes: 0) } != nil)
    }

    /// A `HEAD` response's `Content-Length` describes the resource, not a body: no body comes, so a
    /// length over the bound is no reason to fail.
    @Test func aHeadResponseWithAContentLengthOverTheBoundSucceedsWithNoBody() async throws {
        let head = LoopbackHTTPServer.head(status: 200, [("Content-Length", "50000000"), ("ETag", "\"v1\"")])
        let server = try LoopbackHTTPServer(reply: .complete(head: head, body: []), maxConnections: 1)
        var request = loopbackRequest(server.port)
        request.httpMethod = "HEAD"
        let response = try await URLSessionTransport().send(request, maxBodySize: 1_000)
        #expect(response.statusCode == 200)
        #expect(response.body.isEmpty)
        #expect(response.headers["etag"] == "\"v1\"")
        #expect(await server.waitFor { _ in true } == .request("HEAD /users/1 HTTP/1.1"))
    }

    /// A 304 has no body whatever its `Content-Length` says (it may repeat the full response's).
    @Test func aNotModifiedResponseWithAContentLengthOverTheBoundSucceeds() async throws {
        let head = LoopbackHTTPServer.head(status: 304, [("Content-Length", "50000000"), ("ETag", "\"v1\"")])
        let server = try LoopbackHTTPServer(reply: .complete(head: head, body: []), maxConnections: 1)
        var request = loopbackRequest(server.port)
        request.setValue("\"v1\"", forHTTPHeaderField: "If-None-Match")
        let response = try await URLSessionTransport().send(request, maxBodySize: 1_000)
        #expect(response.statusCode == 304)
        #expect(response.body.isEmpty)
    }

    @Test func aCancelledCallerGetsCancellationErrorPromptlyAndTheRequestIsCancelled() async throws {
        let head = LoopbackHTTPServer.head(status: 200, [("Content-Length", "100")])
        let server = try LoopbackHTTPServer(reply: .headThenWait(head: head), maxConnections: 1)
        let transport = URLSessionTransport()
        let request = loopbackRequest(server.port)
        let caller = Task { try await transport.send(request, maxBodySize: 1_000) }
        #expect(await server.waitFor { $0 == .headSent } != nil)
        let cancelled = ContinuousClock.now
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(ContinuousClock.now - cancelled < Self.prompt)
        // The server sees the connection closed: the request itself was cancelled, not only abandoned.
        #expect(await server.waitFor { $0 == .clientLeft(bodyBytes: 0) } != nil)
    }

    @Test func aCancelledLoaderCallerGetsCancellationErrorNotANetworkLoaderError() async throws {
        let server = try LoopbackHTTPServer(reply: .silence, maxConnections: 1)
        let port = server.port
        let api = SimpleNetworkLoader<Int, String>(
            transport: URLSessionTransport(), createRequest: { id in loopbackRequest(port, "/users/\(id)") },
            decode: { data, _ in String(decoding: data, as: UTF8.self) })
        let caller = Task { try await api.fetch(1) }
        #expect(await server.waitFor { $0 == .request("GET /users/1 HTTP/1.1") } != nil)
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(await server.waitFor { $0 == .clientLeft(bodyBytes: 0) } != nil)
    }

    @Test func aCallerCancelledBeforeSendingSendsNothing() async throws {
        let server = try LoopbackHTTPServer(reply: .silence, maxConnections: 1, lifetime: 2)
        let transport = URLSessionTransport()
        let request = loopbackRequest(server.port)
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(request, maxBodySize: 1_000)
        }
        await #expect(throws: CancellationError.self) { try await caller.value }
        // The server stops by itself after its 2 s; a request sent by mistake would have arrived by then.
        #expect(await server.waitFor { _ in true } == nil)
    }

    @Test func aServerSilentPastTheTimeoutIntervalIsATimeout() async throws {
        let server = try LoopbackHTTPServer(reply: .silence, maxConnections: 1)
        let started = ContinuousClock.now
        await #expect {
            _ = try await URLSessionTransport().send(loopbackRequest(server.port, timeout: 1), maxBodySize: 1_000)
        } throws: { error in
            isLoaderError(error, .timedOut)
        }
        #expect(ContinuousClock.now - started < Self.prompt)
    }

    /// `FoundationNetworking` rounds a timeout down to whole seconds: 0.5 s timed out at once.
    @Test func aTimeoutUnderASecondIsNotShortened() async throws {
        let server = try LoopbackHTTPServer(reply: .silence, maxConnections: 1)
        let started = ContinuousClock.now
        await #expect {
            _ = try await URLSessionTransport().send(loopbackRequest(server.port, timeout: 0.5), maxBodySize: 1_000)
        } throws: { error in
            isLoaderError(error, .timedOut)
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(450), "timed out after \(elapsed)")
        #expect(elapsed < Self.prompt)
    }

    /// `FoundationNetworking` traps on an infinite or NaN timeout (converting it to an integer).
    @Test(arguments: [Double.infinity, .nan, 1e300])
    func aTimeoutThatIsNotAFiniteNumberOfSecondsStillSends(timeout: Double) async throws {
        let head = LoopbackHTTPServer.head(status: 200, [("Content-Length", "2")])
        let server = try LoopbackHTTPServer(reply: .complete(head: head, body: Array("ok".utf8)), maxConnections: 1)
        let response = try await URLSessionTransport().send(
            loopbackRequest(server.port, timeout: timeout), maxBodySize: 1_000)
        #expect(response.body == Data("ok".utf8))
    }

    /// A request that sets no timeout of its own is bound by the configuration's
    /// `timeoutIntervalForRequest` (assigning the request's timeout, even to its own value, made Linux's
    /// URLSession use the request's default 60 s instead).
    @Test func theConfigurationsRequestTimeoutAppliesToARequestWithoutItsOwn() async throws {
        let server = try LoopbackHTTPServer(reply: .silence, maxConnections: 1)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 1.5
        let request = URLRequest(url: testURL("http://127.0.0.1:\(server.port)/users/1"))
        let started = ContinuousClock.now
        await #expect {
            _ = try await URLSessionTransport(configuration: configuration).send(request, maxBodySize: 1_000)
        } throws: { error in
            isLoaderError(error, .timedOut)
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(1_400), "timed out after \(elapsed)")
        #expect(elapsed < Self.prompt)
    }

    @Test func timeoutsAreRoundedUpToWholeSecondsAndADayAtMostOnLinux() {
        #if canImport(FoundationNetworking)
            let expected: [(Double, Double)] = [
                (0.1, 1), (1, 1), (1.5, 2), (60, 60), (86_399.5, 86_400), (1e9, 86_400), (.infinity, 86_400),
            ]
            for (given, kept) in expected {
                #expect(URLSessionTransport.timeoutThisSessionKeeps(given) == kept, "\(given)")
            }
            #expect(URLSessionTransport.timeoutThisSessionKeeps(.nan) == 86_400)
            #expect(URLSessionTransport.timeoutThisSessionKeeps(0) == 0)
        #else
            #expect(URLSessionTransport.timeoutThisSessionKeeps(0.5) == 0.5)
        #endif
    }
}

/// A GET of `path` on 127.0.0.1:`port`, with `timeout` as its `timeoutInterval`.
private func loopbackRequest(_ port: Int, _ path: String = "/users/1", timeout: Double = 20) -> URLRequest {
    var request = URLRequest(url: testURL("http://127.0.0.1:\(port)\(path)"))
    request.timeoutInterval = timeout
    return request
}

/// Whether `error` is the loader error `expected` (compared by description: the enum is not Equatable).
private func isLoaderError(_ error: any Error, _ expected: NetworkLoaderError) -> Bool {
    guard let error = error as? NetworkLoaderError else { return false }
    return "\(error)" == "\(expected)"
}
