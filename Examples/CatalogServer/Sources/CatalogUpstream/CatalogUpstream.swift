public import CatalogModel
public import Hummingbird
public import Logging

/// The upstream product API of the catalogue example: products `1...productCount` generated from their
/// id, with an injected latency, error rate and outage, and counts of the requests it served.
///
/// The routes are those of the README (`Examples/CatalogServer/README.md`): `GET /products/{id}`,
/// `GET /products?ids=...`, `GET /products?cursor=...&limit=...`, `PUT /products/{id}`, `GET`/`PUT
/// /control`, `GET /stats`, `POST /stats/reset`. Every error answer is `{"error": "..."}`.
///
/// The `catalog-upstream` executable runs one on its own; the service starts one in its process when
/// no upstream URL is given:
///
/// ```swift
/// let upstream = CatalogUpstream()
/// let app = upstream.application(port: 0, logger: logger) { port in print("upstream on \(port)") }
/// try await app.runService()  // until SIGTERM or SIGINT
/// ```
public struct CatalogUpstream: Sendable {
    /// How many products a catalogue holds unless told otherwise.
    public static let defaultProductCount = 10_000
    /// The largest body a `PUT` may send, in bytes.
    public static let maximumBodySize = 64 * 1024

    /// The catalogue, the faults and the counts; change the faults or read the counts through it, in
    /// the same process, as `PUT /control` and `GET /stats` do over HTTP.
    public let state: UpstreamState
    /// The clock the injected latency is waited on.
    let clock: any Clock<Duration>

    /// Makes an upstream, not yet serving: see ``application(host:port:logger:onListening:)``.
    ///
    /// - Parameters:
    ///   - productCount: How many products the catalogue holds (ids `1...productCount`).
    ///   - control: The faults to start with; a negative latency waits nothing, and the error rate acts
    ///     as if clamped to 0...1.
    ///   - clock: The clock the injected latency is waited on (the continuous clock by default).
    public init(
        productCount: Int = defaultProductCount, control: UpstreamControl = UpstreamControl(),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.state = UpstreamState(productCount: productCount, control: control)
        self.clock = clock
    }

    /// The upstream's routes, behind a ``JSONErrorMiddleware``.
    ///
    /// - Returns: A router serving the upstream's routes, ready for an `Application`.
    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: JSONErrorMiddleware())
        addRoutes(to: router)
        return router
    }

    /// A Hummingbird application serving the upstream on `host:port`, to run on its own
    /// (`runService()`, which stops gracefully on SIGTERM or SIGINT) or as one service of a
    /// `ServiceGroup`.
    ///
    /// - Parameters:
    ///   - host: The address to listen on (`127.0.0.1` by default).
    ///   - port: The port to listen on; 0 (the default) lets the system pick one.
    ///   - logger: The logger of the server.
    ///   - onListening: Called once, with the port listened on, as soon as the server accepts
    ///     connections.
    /// - Returns: The application; it does not listen until it runs.
    public func application(
        host: String = "127.0.0.1", port: Int = 0, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger)
    }
}
