public import PostgresNIO

/// Where the service keeps its cached products and pages.
public enum CatalogCacheBackend: Sendable {
    /// The SQLite file `catalog.sqlite` in the folder `directory` (created when missing), with a memory
    /// tier in front of it: one process, and the cache survives its restarts.
    case sqlite(directory: String)
    /// Tables of a PostgreSQL database shared by several instances, each told of the others' writes
    /// (LISTEN/NOTIFY) and fetching a key missed on several at once only once (``CatalogService``
    /// migrates the tables at start).
    ///
    /// - Parameters:
    ///   - client: The connection pool. Run it (it is a `Service`) in the same `ServiceGroup`, before the
    ///     catalogue service, so that it stops after the service has drained its requests.
    ///   - instanceID: This instance's name in the notifications it sends (1 to 64 of `A-Z a-z 0-9 . _ -`).
    case postgres(client: PostgresClient, instanceID: String)
}
