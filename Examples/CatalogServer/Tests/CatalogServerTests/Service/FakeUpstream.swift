import Hummingbird
import Logging
import ServiceLifecycle

/// An upstream that breaks its interface, on 127.0.0.1 for the length of a test: its routes are the
/// test's own, answering what the real upstream never would (bodies that are not JSON, products of
/// another id, pages out of order, odd statuses).
enum FakeUpstream {
    /// Why ``run(routes:_:)`` failed before calling its closure.
    struct DidNotStart: Error {}

    /// Serves `routes` on a port the system picks, runs `body` with the base URL, and stops the server.
    ///
    /// - Parameters:
    ///   - routes: Adds the fake's routes to its router.
    ///   - isolation: The caller's actor, where `body` runs.
    ///   - body: What to do while the fake serves, given `http://127.0.0.1:PORT`.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; ``DidNotStart``.
    static func run<Output: Sendable>(
        routes: (Router<BasicRequestContext>) -> Void,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (String) async throws -> Output
    ) async throws -> Output {
        let router = Router()
        routes(router)
        var logger = Logger(label: "fake-upstream")
        logger.logLevel = .error
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            }, logger: logger)
        let group = ServiceGroup(services: [app], logger: logger)
        return try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { tasks in
            tasks.addTask {
                defer { portSink.finish() }
                try await group.run()
            }
            var waiting = ports.makeAsyncIterator()
            guard let port = await waiting.next(), port > 0 else {
                tasks.cancelAll()
                throw DidNotStart()
            }
            let outcome: Result<Output, any Error>
            do {
                outcome = .success(try await body("http://127.0.0.1:\(port)"))
            } catch {
                outcome = .failure(error)
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try outcome.get()
        }
    }

    /// An answer with `body` as its JSON.
    ///
    /// - Parameters:
    ///   - body: The body, as given.
    ///   - status: The status.
    /// - Returns: The answer.
    static func answer(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
