/// A catalogue service that is listening: where, and its repository and metrics (for tests and
/// embedding programs).
public struct CatalogEndpoint: Sendable {
    /// The address it listens on.
    public let host: String
    /// The port it listens on (the one the system picked when configured with 0).
    public let port: Int
    /// Its repository layer.
    public let catalog: any ProductCatalog
    /// Its metrics.
    public let metrics: CatalogMetrics

    /// Its base URL, `http://HOST:PORT`.
    public var url: String { "http://\(host):\(port)" }
}
