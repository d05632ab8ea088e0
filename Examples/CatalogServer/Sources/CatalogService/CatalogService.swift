import AsyncHTTPClient
import CatalogModel
import Foundation
import Hummingbird
public import Logging
import NIOCore
import PostgresNIO
public import ServiceLifecycle
import StoreFlowable
import StoreFlowableLogging
import StoreFlowableMetrics
import StoreFlowablePostgres
import StoreFlowableSQLite

/// The catalogue service as one `Service`: it opens its caches, builds the repository layer and serves
/// the routes until a graceful shutdown, then drains and closes everything it opened.
///
/// Run it in a `ServiceGroup` that handles the signals, after the PostgreSQL client when there is one,
/// so that the group shuts the service down first (reverse order):
///
/// ```swift
/// let service = CatalogService(configuration: configuration, backend: .sqlite(directory: folder), logger: logger)
/// try await ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
/// ```
///
/// What `run()` does, in order:
/// 1. Opens the caches: with SQLite, the file `catalog.sqlite` in the folder (created if missing), a
///    memory tier in front of its products' table; with PostgreSQL, migrates and opens the shared
///    tables (the client must be running: it is a service of the same group).
/// 2. Builds the repository (``CatalogRepository``): the stores, the batcher, the retry policy and the
///    concurrency limit, their events sent to metrics and logs; with PostgreSQL the fleet-wide single
///    flight, and a listener that keeps the stores current with the other instances' writes.
/// 3. Serves the routes (``CatalogRoutes``) with Hummingbird, and calls `onListening` once it accepts
///    connections.
/// 4. On graceful shutdown: stops accepting connections, lets the requests in flight finish (ending
///    the `/events` streams), stops the listener, closes the SQLite caches and shuts the HTTP client
///    down, then returns. A failure to start throws, after closing what was opened.
public struct CatalogService: Service {
    /// What the service is told.
    public let configuration: CatalogConfiguration
    /// Where it caches.
    public let backend: CatalogCacheBackend
    /// Its logger, also for the stores' events (from `notice` up, unless it logs at `debug` or `trace`);
    /// with PostgreSQL, every entry has the instance's id as `instance`.
    public let logger: Logger
    /// Called once the service accepts connections.
    private let onListening: @Sendable (CatalogEndpoint) async -> Void

    /// Makes the service; nothing is opened until ``run()``.
    ///
    /// - Parameters:
    ///   - configuration: What the service is told.
    ///   - backend: Where it caches.
    ///   - logger: Its logger.
    ///   - onListening: Called once, when the service accepts connections, with its address, repository
    ///     and metrics.
    public init(
        configuration: CatalogConfiguration, backend: CatalogCacheBackend, logger: Logger,
        onListening: @escaping @Sendable (CatalogEndpoint) async -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.backend = backend
        var logger = logger
        if case .postgres(_, let instanceID) = backend { logger[metadataKey: "instance"] = "\(instanceID)" }
        self.logger = logger
        self.onListening = onListening
    }

    /// Opens the caches, serves until a graceful shutdown, and closes everything.
    ///
    /// - Throws: Why the service could not start: an `SQLiteCacheError` or `PostgresCacheError` for the
    ///   caches, a Hummingbird or NIO error when the address cannot be listened on.
    public func run() async throws {
        var clientConfiguration = HTTPClient.Configuration()
        // Enough connections for the `/direct` baseline under load; the stores' requests are bounded by
        // their own limit. A refused connection fails at once, and the stores' retry policy decides.
        clientConfiguration.connectionPool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)
        let outcome: Result<Void, any Error>
        do {
            try await run(client: client)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        do {
            try await client.shutdown()
        } catch {
            logger.warning("the HTTP client did not shut down cleanly", metadata: ["error": "\(error)"])
        }
        try outcome.get()
    }

    /// Builds what every backend shares, then opens the backend's caches and serves.
    ///
    /// - Parameter client: The HTTP client of the upstream calls.
    private func run(client: HTTPClient) async throws {
        let metrics = CatalogMetrics()
        let observer = StoreEventFanOut([
            MetricsEventObserver(factory: metrics.factory), LoggingEventObserver(logger: storeEventLogger),
        ])
        let upstream = UpstreamClient(
            baseURL: configuration.upstreamURL, client: client, timeout: configuration.upstreamTimeout,
            pageSize: configuration.pageSize,
            limit: ConcurrencyLimit(
                maxConcurrent: configuration.upstreamConcurrency, maxQueued: configuration.upstreamQueueLimit),
            metrics: metrics)
        let parts = Parts(
            metrics: metrics, upstream: upstream,
            batcher: BatchedOrigin(
                window: configuration.batchWindow, maxBatchSize: configuration.batchSize,
                clock: configuration.batchClock, observer: observer
            ) { ids in try await upstream.products(ids) },
            productManager: FlowableDataStateManager(
                fetchPolicy: FetchPolicy(retry: configuration.retry, clock: configuration.retryClock),
                observer: observer),
            listManager: FlowableDataStateManager(
                fetchPolicy: FetchPolicy(retry: configuration.retry, clock: configuration.retryClock),
                observer: observer))
        switch backend {
        case .sqlite(let directory):
            try await serveFromSQLite(in: directory, parts)
        case .postgres(let client, let instanceID):
            try await serveFromPostgres(client: client, instanceID: instanceID, parts)
        }
    }

    /// Serves over the SQLite file in `directory`, and closes its caches afterwards.
    private func serveFromSQLite(in directory: String, _ parts: Parts) async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = URL(fileURLWithPath: directory).appendingPathComponent("catalog.sqlite").path
        let productFile = try await SQLiteCache<Int, Product>.open(
            name: "\(configuration.cacheName)_products", path: path, policy: configuration.freshness,
            clock: configuration.cacheClock, events: CacheEventLogging.sqlite(logger))
        let lists: SQLiteCache<Int, ProductListRecord>
        do {
            lists = try await SQLiteCache<Int, ProductListRecord>.open(
                name: "\(configuration.cacheName)_pages", path: path, policy: configuration.freshness,
                clock: configuration.cacheClock, events: CacheEventLogging.sqlite(logger))
        } catch {
            await productFile.close()
            throw error
        }
        logger.info("cache opened", metadata: ["backend": "sqlite", "path": "\(path)"])
        // Hits come from memory; the file is the truth, and what a restarted service starts from.
        let products = TieredCache(
            front: MemoryCache<Int, Product>(countLimit: configuration.memoryCacheCount), back: productFile)
        let batcher = parts.batcher
        let repository = CatalogRepository(
            products: KeyedStore(cache: products, manager: parts.productManager) { id in try await batcher.load(id) },
            listCache: lists, listManager: parts.listManager, upstream: parts.upstream, batcher: batcher,
            configuration: configuration, listHasOtherWriters: false, metrics: parts.metrics, logger: logger)
        let outcome: Result<Void, any Error>
        do {
            try await serve(repository, metrics: parts.metrics, services: [])
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        await productFile.close()
        await lists.close()
        logger.info("cache closed", metadata: ["backend": "sqlite"])
        try outcome.get()
    }

    /// Serves over the shared PostgreSQL tables, migrating them first.
    private func serveFromPostgres(client: PostgresClient, instanceID: String, _ parts: Parts) async throws {
        let productsName = "\(configuration.cacheName)_products"
        let listsName = "\(configuration.cacheName)_pages"
        try await PostgresCacheSchema.migrate(name: productsName, client: client)
        try await PostgresCacheSchema.migrate(name: listsName, client: client)
        let logEvent = CacheEventLogging.postgres(logger)
        let (listenerConnections, listenerConnected) = AsyncStream.makeStream(
            of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let products = try await PostgresCache<Int, Product>(
            name: productsName, client: client, policy: configuration.freshness, clock: configuration.cacheClock,
            instanceID: instanceID,
            events: { event in
                logEvent(event)
                if case .listenerConnected = event { listenerConnected.yield() }
            })
        let lists = try await PostgresCache<Int, ProductListRecord>(
            name: listsName, client: client, policy: configuration.freshness, clock: configuration.cacheClock,
            instanceID: instanceID, events: CacheEventLogging.postgres(logger))
        logger.info("cache opened", metadata: ["backend": "postgres", "instance": "\(instanceID)"])
        let batcher = parts.batcher
        // One origin call per key across the fleet: the instance that claims a key loads it (through the
        // batcher), the others wait for its write.
        let singleFlight = PostgresSingleFlight(
            cache: products, lease: configuration.singleFlightLease, events: CacheEventLogging.singleFlight(logger)
        ) { id in
            try await batcher.load(id)
        }
        let stores = KeyedStore(cache: products, manager: parts.productManager, fetch: singleFlight.fetch)
        let repository = CatalogRepository(
            products: stores, listCache: lists, listManager: parts.listManager, upstream: parts.upstream,
            batcher: batcher, configuration: configuration, listHasOtherWriters: true, metrics: parts.metrics,
            logger: logger)
        // Serve once this instance hears the others' changes: a request that came before would start a
        // fetch that the listener's first reload (of every key tracked when it connects) drops and starts
        // again. If the listener cannot connect within the cache's timeout, serve anyway: it keeps
        // retrying, and reloads every tracked key once it connects.
        let logger = logger
        try await serve(
            repository, metrics: parts.metrics, services: [ProductChangeListener(cache: products, products: stores)]
        ) {
            if await !Self.first(of: listenerConnections, within: products.timeout) {
                logger.warning("serving before the change listener could connect; it keeps trying")
            }
        }
    }

    /// Whether `stream` yields within `timeout`.
    ///
    /// - Parameters:
    ///   - stream: The stream to wait on.
    ///   - timeout: The longest wait.
    /// - Returns: `true` when an element came first, `false` when the time ran out or the stream ended.
    private static func first(of stream: AsyncStream<Void>, within timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var elements = stream.makeAsyncIterator()
                return await elements.next() != nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Serves `repository`'s routes, with `services` beside the server, until a graceful shutdown has
    /// drained the server and stopped them.
    ///
    /// The services run in the application's group, which shuts the server down first (it drains the
    /// requests in flight), then them. `beforeServing` runs once the services have started, before the
    /// server listens.
    private func serve(
        _ repository: some ProductCatalog, metrics: CatalogMetrics, services: [any Service],
        beforeServing: @escaping @Sendable () async -> Void = {}
    ) async throws {
        let routes = CatalogRoutes(
            catalog: repository, metrics: metrics, heartbeat: configuration.eventHeartbeat, logger: logger)
        let host = configuration.host
        let port = configuration.port
        let onListening = onListening
        let logger = logger
        var application = Application(
            router: routes.router(),
            server: DeadPeerTimeoutChannel.http1(timeout: configuration.deadPeerTimeout),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "catalog-server"),
            services: services,
            onServerRunning: { channel in
                let endpoint = CatalogEndpoint(
                    host: host, port: channel.localAddress?.port ?? port, catalog: repository, metrics: metrics)
                logger.info("listening", metadata: ["url": "\(endpoint.url)"])
                await onListening(endpoint)
            },
            logger: logger)
        application.beforeServerStarts(perform: beforeServing)
        try await application.run()
        logger.info("drained and stopped")
    }

    /// The logger of the stores' events: the service's, at `notice` or above unless the service logs at
    /// `debug` or `trace`.
    ///
    /// The library logs every stale value served and every batch at `info`: under load that is a line per
    /// request, written under the log handler's lock. At the default level the events are counted in
    /// `/metrics` instead, and only failures (`warning`) are logged; `--log-level debug` logs them all.
    private var storeEventLogger: Logger {
        var eventLogger = logger
        if eventLogger.logLevel > .debug { eventLogger.logLevel = max(eventLogger.logLevel, .notice) }
        return eventLogger
    }

    /// What the stores of every backend share.
    private struct Parts: Sendable {
        let metrics: CatalogMetrics
        let upstream: UpstreamClient
        let batcher: BatchedOrigin<Int, Product>
        let productManager: FlowableDataStateManager<Int>
        let listManager: FlowableDataStateManager<Int>
    }
}
