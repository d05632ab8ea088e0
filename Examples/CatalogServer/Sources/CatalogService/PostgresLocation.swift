import Foundation
public import Logging
public import PostgresNIO

/// A PostgreSQL database named by a URL, `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, as the
/// `--postgres` option takes it.
///
/// The port defaults to 5432 and the database to the user's name. The connection is not encrypted:
/// `sslmode=disable` may be given, any other `sslmode` is refused (this example runs on loopback or a
/// private network; add a `TLSConfiguration` for anything else).
public struct PostgresLocation: Sendable, Equatable {
    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The user to connect as.
    public var username: String
    /// The user's password, if the server asks for one.
    public var password: String?
    /// The database.
    public var database: String

    /// Reads a location from its URL.
    ///
    /// - Parameter url: `postgres://` or `postgresql://`, a user, a host, and optionally a password, a
    ///   port, a database and `sslmode=disable`.
    /// - Throws: ``CatalogSetupError/invalidPostgresURL(reason:)`` saying what is wrong.
    public init(url: String) throws(CatalogSetupError) {
        func invalid(_ reason: String) -> CatalogSetupError { .invalidPostgresURL(reason: reason) }
        guard let components = URLComponents(string: url) else { throw invalid("it is not a URL") }
        guard let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme.lowercased()) else {
            throw invalid("the scheme must be postgres or postgresql")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("it names no host") }
        guard let username = components.user, !username.isEmpty else { throw invalid("it names no user") }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else { throw invalid("the port must be from 1 to 65535") }
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode", item.value == "disable" else {
                throw invalid("only the option sslmode=disable is supported, not '\(item.name)=\(item.value ?? "")'")
            }
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.host = host
        self.port = port
        self.username = username
        self.password = components.password
        self.database = path.isEmpty ? username : path
    }

    /// A client configuration for this database, bounding what a stuck server can hold.
    ///
    /// The server's `statement_timeout` and `lock_timeout` are set to 5 seconds, half the caches'
    /// 10-second timeout (as `Docs/ServerCaches.md` advises: a statement the cache gave up on is ended by
    /// the server too, and frees its connection, even when it waited for a connection first); connecting
    /// gives up after 5 seconds.
    ///
    /// - Returns: The configuration, without TLS.
    public func clientConfiguration() -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = [
            ("statement_timeout", "5000"), ("lock_timeout", "5000"), ("application_name", "catalog-server"),
        ]
        return configuration
    }

    /// A connection pool for this database, with ``clientConfiguration()``. Run it (`run()`, or as a
    /// service of a `ServiceGroup`) for as long as it is used.
    ///
    /// - Parameter logger: The pool's logger.
    /// - Returns: The client, not yet running.
    public func makeClient(logger: Logger) -> PostgresClient {
        PostgresClient(configuration: clientConfiguration(), backgroundLogger: logger)
    }
}
