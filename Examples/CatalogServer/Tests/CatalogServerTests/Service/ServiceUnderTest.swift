import CatalogModel
import CatalogService
import Foundation
import Logging
import ServiceLifecycle
import StoreFlowable
import StoreFlowableTesting

/// A ``CatalogService`` listening on 127.0.0.1 (a port the system picks) over a test's upstream, for the
/// length of a test, and the calls a test makes to it.
///
/// Start one with ``run(upstream:backend:configure:isolation:_:)``: it serves while the closure runs and
/// is shut down gracefully (draining its requests, closing its caches) when the closure returns or
/// throws. Its caches use a `ManualCacheClock` that stands still unless the test moves it, so nothing
/// goes stale while a test runs.
struct ServiceUnderTest: Sendable {
    /// Why ``run(upstream:backend:configure:isolation:_:)`` failed before calling its closure.
    struct DidNotStart: Error {}

    /// Where a service under test caches.
    enum Backend: Sendable {
        /// A new temporary folder, removed after the test.
        case temporarySQLite
        /// The SQLite file in this folder, kept (for restarts).
        case sqlite(directory: String)
        /// The PostgreSQL database at this URL, as instance `instanceID`, in tables starting with
        /// `cacheName`.
        case postgres(url: String, instanceID: String, cacheName: String)
    }

    /// The service, once listening: its address, repository and metrics.
    let endpoint: CatalogEndpoint
    /// The clock of its caches.
    let cacheClock: ManualCacheClock
    /// Starts its graceful shutdown (the closure of ``run(upstream:backend:configure:isolation:_:)`` may
    /// call it to test the shutdown; it is called again, harmlessly, when the closure ends).
    let shutDown: @Sendable () async -> Void

    /// Its repository layer.
    var catalog: any ProductCatalog { endpoint.catalog }

    /// Starts a service over `upstream`, runs `body` with it, and shuts it down gracefully.
    ///
    /// - Parameters:
    ///   - upstream: The upstream's base URL.
    ///   - backend: Where it caches.
    ///   - cacheClock: The clock of its caches; a new one by default.
    ///   - configure: Changes to the configuration (clocks, freshness, retries).
    ///   - logs: Where the service's log entries are kept, from `debug` up, when given; otherwise it logs
    ///     errors to standard output (or from the level `CATALOG_TEST_LOG_LEVEL` names).
    ///   - isolation: The caller's actor, where `body` runs.
    ///   - body: What to do while the service runs.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; ``DidNotStart``; why the service failed.
    @discardableResult
    static func run<Output: Sendable>(
        upstream: String,
        backend: Backend = .temporarySQLite,
        cacheClock: ManualCacheClock = ManualCacheClock(),
        configure: (inout CatalogConfiguration) -> Void = { _ in },
        logs: LogEntries? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ServiceUnderTest) async throws -> Output
    ) async throws -> Output {
        guard let upstreamURL = URL(string: upstream) else { throw DidNotStart() }
        var configuration = CatalogConfiguration(upstreamURL: upstreamURL)
        configuration.port = 0
        configuration.cacheClock = cacheClock
        // Tests hold upstream requests on manual clocks: a real deadline must not end them meanwhile.
        configuration.upstreamTimeout = .seconds(30)
        configure(&configuration)
        var logger = logs?.logger(level: .debug) ?? Logger(label: "catalog-service-test")
        if logs == nil {
            // Quiet unless asked: CATALOG_TEST_LOG_LEVEL=debug shows what the service did.
            logger.logLevel =
                ProcessInfo.processInfo.environment["CATALOG_TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) }
                ?? .error
        }

        var services: [any Service] = []
        let cacheBackend: CatalogCacheBackend
        var temporaryFolder: String?
        switch backend {
        case .temporarySQLite:
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("catalog-service-test-\(UUID().uuidString)").path
            temporaryFolder = folder
            cacheBackend = .sqlite(directory: folder)
        case .sqlite(let directory):
            cacheBackend = .sqlite(directory: directory)
        case .postgres(let url, let instanceID, let cacheName):
            let client = try PostgresLocation(url: url).makeClient(logger: logger)
            services.append(client)
            cacheBackend = .postgres(client: client, instanceID: instanceID)
            configuration.cacheName = cacheName
        }
        defer {
            if let temporaryFolder { try? FileManager.default.removeItem(atPath: temporaryFolder) }
        }

        let (endpoints, endpointSink) = AsyncStream.makeStream(of: CatalogEndpoint.self)
        services.append(
            CatalogService(configuration: configuration, backend: cacheBackend, logger: logger) { endpoint in
                endpointSink.yield(endpoint)
                endpointSink.finish()
            })
        var groupConfiguration = ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }, logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(20)
        let group = ServiceGroup(configuration: groupConfiguration)
        return try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { tasks in
            tasks.addTask {
                // A service that fails to start ends the wait for its endpoint.
                defer { endpointSink.finish() }
                try await group.run()
            }
            var waiting = endpoints.makeAsyncIterator()
            guard let endpoint = await waiting.next() else {
                // The group ended before listening: its error says why.
                try await tasks.waitForAll()
                throw DidNotStart()
            }
            let service = ServiceUnderTest(
                endpoint: endpoint, cacheClock: cacheClock, shutDown: { await group.triggerGracefulShutdown() })
            let outcome: Result<Output, any Error>
            do {
                outcome = .success(try await body(service))
            } catch {
                outcome = .failure(error)
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try outcome.get()
        }
    }

    /// `GET`s `path` from the service.
    ///
    /// - Parameter path: The path and query, starting with `/`.
    /// - Returns: The answer.
    /// - Throws: Why the exchange failed (every status is an answer).
    func get(_ path: String) async throws -> ServiceClient.Answer {
        try await ServiceClient.call("GET", endpoint.url + path)
    }

    /// Calls the service.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: The path and query, starting with `/`.
    ///   - body: A JSON body, if any.
    /// - Returns: The answer.
    /// - Throws: Why the exchange failed (every status is an answer).
    func call(_ method: String, _ path: String, body: String? = nil) async throws -> ServiceClient.Answer {
        try await ServiceClient.call(method, endpoint.url + path, body: body)
    }

    /// Calls the service with `value` as the JSON body.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: The path, starting with `/`.
    ///   - value: The body's value.
    /// - Returns: The answer.
    /// - Throws: Why the exchange failed.
    func call(_ method: String, _ path: String, json value: some Encodable) async throws -> ServiceClient.Answer {
        try await ServiceClient.call(method, endpoint.url + path, json: value)
    }

    /// `GET /products/{id}`, expecting a product.
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The product.
    /// - Throws: ``UnexpectedAnswer`` for another status; why the exchange failed.
    func product(_ id: Int) async throws -> Product {
        let answer = try await get("/products/\(id)")
        guard answer.status == 200 else { throw UnexpectedAnswer(status: answer.status, body: answer.text) }
        return try answer.decode(Product.self)
    }

    /// Opens `/products/{id}/events`.
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The stream's client.
    func events(of id: Int) -> EventStreamClient {
        EventStreamClient(url: endpoint.url + "/products/\(id)/events")
    }

    /// The value of the sample `name` (with its labels, as `/metrics` writes them), read from
    /// `GET /metrics`.
    ///
    /// - Parameter name: The sample's name and labels, such as `catalog_event_streams_open`.
    /// - Returns: Its value, or `nil` when `/metrics` has no such sample.
    /// - Throws: Why the exchange failed.
    func metric(_ name: String) async throws -> Double? {
        let text = try await get("/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }
}

/// A call answered with a status the test did not expect.
struct UnexpectedAnswer: Error, CustomStringConvertible {
    /// The status.
    let status: Int
    /// The body.
    let body: String

    var description: String { "unexpected answer \(status): \(body)" }
}
