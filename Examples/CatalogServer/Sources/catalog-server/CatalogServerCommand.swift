import ArgumentParser
import CatalogModel
import CatalogService
import CatalogUpstream
import Foundation
import Logging
import ServiceLifecycle
import StoreFlowable

/// `catalog-server`: the catalogue service, with its options of `Examples/CatalogServer/README.md`.
///
/// Without `--upstream` it starts the upstream in this process; without `--postgres` it caches in an
/// SQLite file. Once listening it prints `listening on http://HOST:PORT` to standard output; SIGTERM or
/// SIGINT drains the requests in flight, stops the listener and the pools, closes the caches and exits 0.
@main
struct CatalogServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog-server",
        abstract: "A product catalogue service whose repository layer is StoreFlowable.",
        discussion: """
            Serves products from an upstream API through stores cached in SQLite (by default) or in \
            PostgreSQL shared by several instances. Prints 'listening on http://HOST:PORT' once listening; \
            stops gracefully on SIGTERM or SIGINT. Logs go to standard error.
            """)

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: the system picks one).")
    var port = 8080

    @Option(help: "The upstream's base URL; when absent, an upstream is started in this process.")
    var upstream: String?

    @Option(
        name: .customLong("upstream-latency-ms"),
        help: "The latency of the in-process upstream, in milliseconds (without --upstream only).")
    var upstreamLatencyMilliseconds = 20

    @Option(
        name: .customLong("cache-directory"),
        help: "The folder of the SQLite cache file (a new temporary folder, removed at exit, by default).")
    var cacheDirectory: String?

    @Option(
        help:
            "A PostgreSQL URL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE): cache there, shared with other instances."
    )
    var postgres: String?

    @Option(name: .customLong("instance-id"), help: "This instance's name among those sharing --postgres.")
    var instanceID: String?

    @Option(name: .customLong("fresh-for"), help: "How long a cached product is fresh, in seconds.")
    var freshFor = 5.0

    @Option(
        name: .customLong("stale-while-revalidate"),
        help: "How long after that a stale product is served at once while one fetch refreshes it, in seconds.")
    var staleWhileRevalidate = 30.0

    @Option(
        name: .customLong("stale-if-error"),
        help: "How long after --fresh-for a stale product is served in place of a failing upstream, in seconds.")
    var staleIfError = 300.0

    @Option(
        name: .customLong("dead-peer-timeout"),
        help: "How long a client that vanished without closing keeps its connection and /events stream, in seconds.")
    var deadPeerTimeout = 30

    @Option(
        name: .customLong("log-level"),
        help: "The lowest level logged: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard upstreamLatencyMilliseconds >= 0 else { throw ValidationError("--upstream-latency-ms must be 0 or more") }
        if let upstream, upstreamURL(upstream) == nil {
            throw ValidationError("--upstream must be an http:// or https:// URL with a host, not '\(upstream)'")
        }
        if let postgres {
            do {
                _ = try PostgresLocation(url: postgres)
            } catch {
                throw ValidationError("--postgres: \(error)")
            }
            guard let instanceID else { throw ValidationError("--postgres needs --instance-id") }
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
            guard (1...64).contains(instanceID.count), instanceID.allSatisfy(allowed.contains) else {
                throw ValidationError("--instance-id must be 1 to 64 of A-Z a-z 0-9 . _ -, not '\(instanceID)'")
            }
            guard cacheDirectory == nil else {
                throw ValidationError("--cache-directory is for the SQLite cache; it cannot go with --postgres")
            }
        } else if instanceID != nil {
            throw ValidationError("--instance-id names an instance sharing --postgres; give --postgres too")
        }
        for (name, seconds) in [
            ("--fresh-for", freshFor), ("--stale-while-revalidate", staleWhileRevalidate),
            ("--stale-if-error", staleIfError),
        ] where !(seconds.isFinite && seconds >= 0 && seconds <= Self.maximumSeconds) {
            // Bounded: `Duration.seconds(_:)` traps on a value past its range (1e21 seconds crashed it).
            throw ValidationError("\(name) must be a number of seconds from 0 to \(Int(Self.maximumSeconds))")
        }
        guard (1...Self.maximumDeadPeerTimeout).contains(deadPeerTimeout) else {
            throw ValidationError("--dead-peer-timeout must be whole seconds from 1 to \(Self.maximumDeadPeerTimeout)")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be trace, debug, info, notice, warning, error or critical")
        }
    }

    func run() async throws {
        // `validate()` accepted the level.
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "catalog-server")
        logger.logLevel = level

        var services: [any Service] = []
        let backend: CatalogCacheBackend
        var temporaryFolder: String?
        if let postgres, let instanceID {
            // `validate()` parsed the URL.
            let client = try PostgresLocation(url: postgres).makeClient(logger: logger)
            services.append(client)
            backend = .postgres(client: client, instanceID: instanceID)
        } else if let cacheDirectory {
            backend = .sqlite(directory: cacheDirectory)
        } else {
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("catalog-server-\(UUID().uuidString)").path
            temporaryFolder = folder
            backend = .sqlite(directory: folder)
        }
        defer {
            if let temporaryFolder { try? FileManager.default.removeItem(atPath: temporaryFolder) }
        }

        if let upstream, let url = upstreamURL(upstream) {
            services.append(catalogService(upstreamURL: url, backend: backend, logger: logger))
            try await ServiceGroup(configuration: groupConfiguration(services, logger: logger)).run()
        } else {
            try await runWithUpstreamInProcess(services: services, backend: backend, logger: logger)
        }
    }

    /// Runs an upstream in this process, then the service over it once the upstream listens, in one
    /// group: the service is added last, so a shutdown drains it before the upstream stops.
    ///
    /// - Parameters:
    ///   - services: The services to run before both (the PostgreSQL client).
    ///   - backend: Where the service caches.
    ///   - logger: The logger.
    private func runWithUpstreamInProcess(services: [any Service], backend: CatalogCacheBackend, logger: Logger)
        async throws
    {
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        var upstreamLogger = logger
        upstreamLogger[metadataKey: "component"] = "upstream"
        let upstream = CatalogUpstream(control: UpstreamControl(latencyMilliseconds: upstreamLatencyMilliseconds))
            .application(host: "127.0.0.1", port: 0, logger: upstreamLogger) { port in portSink.yield(port) }
        let group = ServiceGroup(configuration: groupConfiguration(services + [upstream], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                // The port stream ends with the group, so that a failed start is not awaited for ever.
                defer { portSink.finish() }
                try await group.run()
            }
            var waitingForPort = ports.makeAsyncIterator()
            if let port = await waitingForPort.next(), let url = URL(string: "http://127.0.0.1:\(port)") {
                logger.info("upstream started in process", metadata: ["url": "\(url)"])
                await group.addServiceUnlessShutdown(catalogService(upstreamURL: url, backend: backend, logger: logger))
            }
            try await tasks.waitForAll()
        }
    }

    /// The longest freshness window accepted, in seconds: about 31 years.
    static let maximumSeconds = 1e9
    /// The longest `--dead-peer-timeout` accepted, in seconds: a day.
    static let maximumDeadPeerTimeout = 86_400
    /// How long a graceful shutdown may take before the group cancels what is left: a client that stopped
    /// sending a request's body, or stopped reading its `/events` stream, holds its connection open, and
    /// the server's drain would wait for it for ever.
    static let maximumGracefulShutdown: Duration = .seconds(20)
    /// How long the services may take to end once cancelled before the group gives up on them.
    static let maximumCancellation: Duration = .seconds(5)

    /// The group of `services`: SIGTERM and SIGINT shut it down gracefully, bounded by
    /// ``maximumGracefulShutdown`` and then ``maximumCancellation``.
    ///
    /// - Parameters:
    ///   - services: The services, in start order (shut down in reverse).
    ///   - logger: The group's logger.
    /// - Returns: The configuration.
    private func groupConfiguration(_ services: [any Service], logger: Logger) -> ServiceGroupConfiguration {
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
        configuration.maximumGracefulShutdownDuration = Self.maximumGracefulShutdown
        configuration.maximumCancellationDuration = Self.maximumCancellation
        return configuration
    }

    /// The catalogue service over `upstreamURL`, configured from the options, printing its address once
    /// listening.
    ///
    /// - Parameters:
    ///   - upstreamURL: The upstream's base URL.
    ///   - backend: Where it caches.
    ///   - logger: Its logger.
    /// - Returns: The service.
    private func catalogService(upstreamURL: URL, backend: CatalogCacheBackend, logger: Logger) -> CatalogService {
        var configuration = CatalogConfiguration(upstreamURL: upstreamURL)
        configuration.host = host
        configuration.port = port
        configuration.freshness = FreshnessPolicy(
            freshFor: .seconds(freshFor), staleWhileRevalidate: .seconds(staleWhileRevalidate),
            staleIfError: .seconds(staleIfError))
        configuration.deadPeerTimeout = .seconds(deadPeerTimeout)
        return CatalogService(configuration: configuration, backend: backend, logger: logger) { endpoint in
            // Unbuffered, so that whoever started the process reads the line at once.
            FileHandle.standardOutput.write(Data("listening on \(endpoint.url)\n".utf8))
        }
    }

    /// `text` as an upstream base URL: `http` or `https`, with a host.
    ///
    /// - Parameter text: The option's value.
    /// - Returns: The URL, or `nil` when it is not one.
    private func upstreamURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host?.isEmpty == false
        else { return nil }
        return url
    }
}
