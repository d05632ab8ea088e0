import Hummingbird
import Logging
import ServiceLifecycle

/// A real HTTP server on 127.0.0.1, on a port the system picks, serving the routes the loader tests
/// need, and counting the requests of each route.
///
/// Start one with ``run(_:)``: it serves while the closure runs and shuts down when it returns or
/// throws, so no test leaves a server behind.
///
/// Routes:
/// - `GET /users/:id`: 200 with `{"id": id, "name": "user id"}`.
/// - `HEAD /large`: 200 with the `Content-Length` of `/large` and no body; `GET /not-modified-large`: 304 with
///   that `Content-Length`.
/// - `GET /not-modified`: 304; `GET /missing`: 404 with the body `no such user`; `GET /broken`: 500.
/// - `GET /not-json`: 200 with an HTML body.
/// - `GET /slow`: answers after ``slowDelay`` (so a caller can time out or give up first; it ends by
///   itself). When the client closes the connection before, the request ends at once and is counted
///   as `slow-closed`.
/// - `GET /late`: answers after ``lateDelay``, for a timeout under a second.
/// - `GET /large`: 200 with ``largeBodySize`` bytes of JSON.
/// - `GET /gated/:id`: like `/users/:id`, but waits until ``openGate()`` (or ``slowDelay``), so that
///   concurrent loads overlap.
public struct LoopbackServer: Sendable {
    /// How long `/slow` (and at most `/gated`) waits before answering.
    public static let slowDelay: Duration = .seconds(5)
    /// How long `/late` waits before answering.
    public static let lateDelay: Duration = .milliseconds(100)
    /// The size of `/large`'s body.
    public static let largeBodySize = 256 * 1024

    /// The port the server listens on.
    public let port: Int
    private let counter: RequestCounter
    private let gate: Gate

    /// The base URL of the server, `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// How long ``waitForRequests(_:count:)`` waits at most.
    public static let waitLimit: Duration = .seconds(20)

    /// How many requests reached `path` (a route's first path component, such as `"users"`), or how many
    /// `/slow` requests the client closed, for `"slow-closed"`.
    public func requestCount(_ path: String) -> Int { counter.count(path) }

    /// Waits until `count` requests have reached `path` (as counted by ``requestCount(_:)``), without
    /// polling, for at most ``waitLimit``.
    ///
    /// - Parameters:
    ///   - path: A route's first path component, such as `"users"`, or `"slow-closed"`.
    ///   - count: The number of requests to wait for.
    /// - Returns: `true` once the count is reached; `false` if it was not within ``waitLimit``, or the
    ///   calling task was cancelled.
    public func waitForRequests(_ path: String, count: Int = 1) async -> Bool {
        await counter.wait(until: path, reaches: count, atMost: Self.waitLimit)
    }

    /// Lets every request waiting in `/gated` answer.
    public func openGate() { gate.open() }

    /// How long the server may take to stop (finishing the requests it has) before it is cancelled.
    public static let stopLimit: Duration = .seconds(10)

    /// Starts a server, runs `body` with it (in the caller's isolation), and stops the server.
    ///
    /// The server stops gracefully: it stops accepting connections, then finishes the requests it has
    /// (each ends within ``slowDelay``, or as soon as its client leaves) and closes its connections,
    /// within ``stopLimit``. Cancelling it instead would drop a connection accepted at that moment,
    /// which crashes the process ("Deinited NIOAsyncWriter without calling finish()", SwiftNIO 2.101
    /// with Hummingbird 2.28): a client that gave up early may still be connecting.
    ///
    /// - Parameters:
    ///   - isolation: The caller's actor, where `body` runs.
    ///   - body: What to do while the server runs.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or why the server could not start or stop.
    @discardableResult
    public static func run<Output: Sendable>(
        isolation: isolated (any Actor)? = #isolation, _ body: (LoopbackServer) async throws -> Output
    ) async throws -> Output {
        let counter = RequestCounter()
        let gate = Gate()
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "loopback-server")
        logger.logLevel = .warning
        let app = Application(
            router: makeRouter(counter: counter, gate: gate),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger
        )
        var configuration = ServiceGroupConfiguration(services: [.init(service: app)], logger: logger)
        configuration.maximumGracefulShutdownDuration = stopLimit
        let services = ServiceGroup(configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { group in
            group.addTask {
                // A server that fails to start ends the wait for its port.
                defer { portContinuation.finish() }
                try await services.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                group.cancelAll()
                throw ServerDidNotStart()
            }
            let outcome: Result<Output, any Error>
            do {
                outcome = .success(try await body(LoopbackServer(port: port, counter: counter, gate: gate)))
            } catch {
                outcome = .failure(error)
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return try outcome.get()
        }
    }

    /// Why ``run(_:)`` failed before calling its closure.
    public struct ServerDidNotStart: Error {}
}
