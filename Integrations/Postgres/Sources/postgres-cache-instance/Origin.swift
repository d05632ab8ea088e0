import PostgresNIO

/// The origin of the instance's store, standing in for the service a server would call: each call is
/// recorded as a row of `test_origin_calls` (so that a test counts the calls of every instance in one
/// place), then takes the instance's delay and returns `"<key>@<instance>#<n>"`, `n` counting this
/// instance's calls from 1.
actor Origin {
    /// The table of calls, shared by every instance on the server.
    static let table = "test_origin_calls"

    private let client: PostgresClient
    private let instance: String
    private let delay: Duration
    private let timeout: Duration
    /// The calls so far.
    private var calls = 0

    /// An origin recording its calls through `client`.
    ///
    /// - Parameters:
    ///   - client: The running client.
    ///   - instance: The instance's name.
    ///   - delay: How long each call takes after recording itself.
    ///   - timeout: The longest wait for the recording statement.
    init(client: PostgresClient, instance: String, delay: Duration, timeout: Duration) {
        self.client = client
        self.instance = instance
        self.delay = delay
        self.timeout = timeout
    }

    /// Creates the table of calls if it is missing. Several instances may start at once, and
    /// `CREATE TABLE IF NOT EXISTS` alone can fail when two sessions create the same table together
    /// (a unique violation in the catalog), so it runs under a transaction-scoped advisory lock.
    ///
    /// - Parameters:
    ///   - client: The running client.
    ///   - timeout: The longest wait.
    /// - Throws: What postgres-nio throws, or ``OriginTimedOut``.
    static func createTable(client: PostgresClient, timeout: Duration) async throws {
        let statement = PostgresQuery(
            unsafeSQL: """
                DO $origin$
                BEGIN
                    PERFORM pg_advisory_xact_lock(7355608);
                    CREATE TABLE IF NOT EXISTS \(table) (
                        key TEXT NOT NULL, instance TEXT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp());
                END
                $origin$
                """)
        try await withTimeout(timeout) {
            for try await _ in try await client.query(statement) {}
        }
    }

    /// Fetches `key`: records the call, waits the delay, returns the value.
    ///
    /// - Parameter key: The key.
    /// - Returns: `"<key>@<instance>#<n>"`.
    /// - Throws: The database's error or ``OriginTimedOut`` when the call could not be recorded;
    ///   `CancellationError` when the store cancelled the fetch.
    func fetch(_ key: String) async throws -> String {
        calls += 1
        let number = calls
        let (client, instance) = (client, instance)
        try await withTimeout(timeout) {
            let insert: PostgresQuery = "INSERT INTO test_origin_calls (key, instance) VALUES (\(key), \(instance))"
            for try await _ in try await client.query(insert) {}
        }
        try await Task.sleep(for: delay)
        return "\(key)@\(instance)#\(number)"
    }
}
