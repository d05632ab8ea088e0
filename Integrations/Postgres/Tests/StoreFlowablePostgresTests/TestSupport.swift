import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import StoreFlowablePostgresTestServer

/// The throwaway server of the `StoreFlowablePostgresTestServer` target (the benchmarks use it too), by
/// the name every test file uses without importing that module.
typealias TestPostgresServer = StoreFlowablePostgresTestServer.TestPostgresServer

/// The shared server, started on first use, on a thread of its own (not one of the concurrency pool,
/// whose blocked threads would stop every other test's tasks).
///
/// - Returns: The server.
/// - Throws: Why it could not start (PostgreSQL missing, a command failed).
func sharedServer() async throws -> TestPostgresServer {
    try await TestPostgresServer.launchShared()
}

/// A cache name no other test uses: `t_` and random digits and letters.
///
/// - Returns: A valid, unique cache name.
func uniqueName() -> String {
    "t_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
}

/// Runs `body` with a new client of `server`, running it for the duration.
///
/// - Parameters:
///   - server: The server to connect to; the shared one by default.
///   - connectTimeout: The client's connect timeout.
///   - body: The test's work.
/// - Returns: What `body` returned.
/// - Throws: What `body` threw, or why the shared server could not start.
func withClient<Output: Sendable>(
    _ server: TestPostgresServer? = nil, connectTimeout: Duration = .seconds(3), statementTimeout: Duration? = nil,
    _ body: @Sendable (PostgresClient) async throws -> Output
) async throws -> Output {
    let server = if let server { server } else { try await sharedServer() }
    let client = PostgresClient(
        configuration: server.configuration(connectTimeout: connectTimeout, statementTimeout: statementTimeout))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

/// Migrates a new cache name and opens a cache of `Int` keys and `String` values on it.
///
/// - Parameters:
///   - client: The running client.
///   - name: The cache name; a unique one by default.
///   - policy: The cache's policy.
///   - clock: The cache's clock.
///   - valueFormat: The value format.
///   - sizeLimit: The size limit.
///   - instanceID: The cache object's id in its notifications; a random one by default.
///   - events: Receives the cache's events.
/// - Returns: The open cache.
/// - Throws: A ``PostgresCacheError``.
func makeCache(
    _ client: PostgresClient, name: String = uniqueName(), policy: FreshnessPolicy = .forever,
    clock: any CacheClock = SystemCacheClock(), valueFormat: Int32 = 1, sizeLimit: Int? = nil,
    timeout: Duration = .seconds(10), instanceID: String? = nil,
    events: (@Sendable (PostgresCacheEvent) -> Void)? = nil
) async throws -> PostgresCache<Int, String> {
    try await PostgresCacheSchema.migrate(name: name, client: client)
    return try await PostgresCache<Int, String>(
        name: name, client: client, policy: policy, clock: clock, valueFormat: valueFormat, sizeLimit: sizeLimit,
        timeout: timeout, instanceID: instanceID, events: events)
}

/// Opens a cache of `Int` keys and `String` values with a short `timeout` on the migrated cache `name`,
/// trying again (20 times at most) when the open itself times out: its statement has the same short
/// timeout, which a busy machine (the whole suite on 2 cores) may exceed.
///
/// - Parameters:
///   - client: The running client.
///   - name: The cache name, already migrated.
///   - timeout: The cache's timeout.
/// - Returns: The open cache.
/// - Throws: A ``PostgresCacheError`` other than `timedOut`, or the last `timedOut`.
func openWithShortTimeout(
    _ client: PostgresClient, name: String, timeout: Duration
) async throws -> PostgresCache<Int, String> {
    var attempt = 0
    while true {
        attempt += 1
        do throws(PostgresCacheError) {
            return try await PostgresCache<Int, String>(name: name, client: client, timeout: timeout)
        } catch {
            guard case .timedOut = error, attempt < 20 else { throw error }
        }
    }
}

/// Runs `query` and returns its single `BIGINT` or `INTEGER` (as `Int64`), or `nil` for no row.
///
/// - Parameters:
///   - client: The running client.
///   - query: A statement returning at most one row of one `BIGINT` column.
/// - Returns: The value.
/// - Throws: What postgres-nio throws.
func scalar(_ client: PostgresClient, _ query: PostgresQuery) async throws -> Int64? {
    var value: Int64?
    for try await found in try await client.query(query).decode(Int64.self) { value = found }
    return value
}

/// Runs `query`, discarding its rows.
///
/// - Parameters:
///   - client: The running client.
///   - query: A statement.
/// - Throws: What postgres-nio throws.
func execute(_ client: PostgresClient, _ query: PostgresQuery) async throws {
    for try await _ in try await client.query(query) {}
}

/// Collects a cache's events from any thread, without a lock: an `AsyncStream` buffers them.
final class EventLog: Sendable {
    private let stream: AsyncStream<PostgresCacheEvent>
    private let continuation: AsyncStream<PostgresCacheEvent>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    /// The handler to pass to a cache.
    var handler: @Sendable (PostgresCacheEvent) -> Void {
        let continuation = continuation
        return { continuation.yield($0) }
    }

    /// Every event reported so far; call once, when the cache is no longer used.
    ///
    /// - Returns: The events in order.
    func finish() async -> [PostgresCacheEvent] {
        continuation.finish()
        var events: [PostgresCacheEvent] = []
        for await event in stream { events.append(event) }
        return events
    }
}
