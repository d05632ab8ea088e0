import AsyncHTTPClient
import CatalogModel
import CatalogUpstream
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// A ``CatalogUpstream`` serving on 127.0.0.1, on a port the system picks, for the length of a test,
/// and the calls a test makes to it over HTTP (through AsyncHTTPClient).
///
/// Start one with ``run(productCount:control:clock:isolation:_:)``: it serves while the closure runs and
/// stops gracefully when it returns or throws, so no test leaves a server behind.
struct UpstreamTestServer: Sendable {
    /// An answer of the upstream: its status code and body.
    struct Answer: Sendable {
        /// The status code.
        let status: Int
        /// The body.
        let body: ByteBuffer
        /// The `Content-Type` header.
        let contentType: String?

        /// The body decoded from JSON.
        func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
            try JSONDecoder().decode(type, from: Data(body.readableBytesView))
        }
    }

    /// Why ``run(productCount:control:clock:isolation:_:)`` failed before calling its closure.
    struct DidNotStart: Error {}

    /// How long the server may take to stop gracefully.
    static let stopLimit: Duration = .seconds(10)

    /// The upstream, for its state.
    let upstream: CatalogUpstream
    /// `http://127.0.0.1:PORT`.
    let baseURL: String

    /// Starts an upstream, runs `body` with it, and stops it gracefully.
    ///
    /// - Parameters:
    ///   - productCount: How many products the catalogue holds.
    ///   - control: The faults to start with (no latency by default, so that tests run fast).
    ///   - clock: The clock the latency is waited on.
    ///   - logs: Where the server's log entries are kept, from `debug` up, when given; otherwise it logs
    ///     warnings and errors to standard output.
    ///   - isolation: The caller's actor, where `body` runs.
    ///   - body: What to do while the server runs.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or why the server could not start or stop.
    @discardableResult
    static func run<Output: Sendable>(
        productCount: Int = CatalogUpstream.defaultProductCount,
        control: UpstreamControl = UpstreamControl(latencyMilliseconds: 0),
        clock: any Clock<Duration> = ContinuousClock(),
        logs: LogEntries? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (UpstreamTestServer) async throws -> Output
    ) async throws -> Output {
        let upstream = CatalogUpstream(productCount: productCount, control: control, clock: clock)
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        var logger = logs?.logger(level: .debug) ?? Logger(label: "upstream-test-server")
        if logs == nil { logger.logLevel = .warning }
        let app = upstream.application(host: "127.0.0.1", port: 0, logger: logger) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
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
                throw DidNotStart()
            }
            let outcome: Result<Output, any Error>
            do {
                let server = UpstreamTestServer(upstream: upstream, baseURL: "http://127.0.0.1:\(port)")
                outcome = .success(try await body(server))
            } catch {
                outcome = .failure(error)
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return try outcome.get()
        }
    }

    /// GETs a path of the upstream.
    ///
    /// - Parameter path: The path and query, starting with `/`.
    /// - Returns: The answer.
    /// - Throws: Why the call failed (not a status: every status is an answer).
    func call(_ path: String) async throws -> Answer {
        try await call("GET", path)
    }

    /// Calls the upstream.
    ///
    /// - Parameters:
    ///   - method: The method, such as `PUT`.
    ///   - path: The path and query, starting with `/`.
    ///   - body: The body, if any.
    /// - Returns: The answer.
    /// - Throws: Why the call failed (not a status: every status is an answer).
    func call(_ method: String, _ path: String, body: String? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .init(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(20))
        let collected = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return Answer(
            status: Int(response.status.code), body: collected,
            contentType: response.headers.first(name: "Content-Type"))
    }

    /// Calls the upstream with a JSON body.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: The path, starting with `/`.
    ///   - value: The body, encoded in JSON.
    /// - Returns: The answer.
    /// - Throws: Why the call failed.
    func call(_ method: String, _ path: String, json value: some Encodable) async throws -> Answer {
        try await call(method, path, body: String(decoding: try JSONEncoder().encode(value), as: UTF8.self))
    }
}
