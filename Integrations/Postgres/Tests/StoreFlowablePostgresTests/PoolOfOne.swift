import PostgresNIO

/// Runs `body` with a new client of the shared server whose pool has one connection at most, running
/// the client for the duration.
///
/// Every statement, the test's own and its caches', then goes through that one connection: a statement
/// that keeps it (waiting on a stopped backend, say) leaves none for the next, and
/// ``onlyConnection(_:)`` names the backend they all use.
///
/// - Parameter body: The test's work.
/// - Returns: What `body` returned.
/// - Throws: What `body` threw, or why the shared server could not start.
func withPoolOfOne<Output>(_ body: (PostgresClient) async throws -> Output) async throws -> Output {
    var configuration = try await sharedServer().configuration()
    configuration.options.maximumConnections = 1
    let client = PostgresClient(configuration: configuration)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

/// The server process of the only connection of a client made by ``withPoolOfOne(_:)``, and the
/// connection's port on the client side: what ``FrozenBackend`` stops and watches.
///
/// - Parameter client: The running client.
/// - Returns: The backend's process id and the connection's client port.
/// - Throws: What postgres-nio throws, or ``FrozenBackend/Failure`` when the query returned no row.
func onlyConnection(_ client: PostgresClient) async throws -> (backend: Int64, port: Int64) {
    var connection: (backend: Int64, port: Int64)?
    for try await found in try await client.query("SELECT pg_backend_pid()::int8, inet_client_port()::int8")
        .decode((Int64, Int64).self)
    {
        connection = found
    }
    guard let connection else { throw FrozenBackend.Failure(description: "no backend") }
    return connection
}
