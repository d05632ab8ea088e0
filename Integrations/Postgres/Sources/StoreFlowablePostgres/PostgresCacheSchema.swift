public import PostgresNIO

/// Creates and checks the tables of ``PostgresCache``s: run ``migrate(name:client:timeout:)`` once per
/// cache name (at deployment, or at every start: it is idempotent) before opening the cache.
///
/// ```swift
/// try await PostgresCacheSchema.migrate(name: "users", client: client)
/// let users = try await PostgresCache<Int, User>(name: "users", client: client)
/// ```
///
/// A cache never creates or alters a table itself: opening one whose table is missing throws
/// ``PostgresCacheError/notMigrated(name:)``, and one whose recorded layout differs from this library's
/// throws ``PostgresCacheError/schemaMismatch(found:expected:)``.
///
/// **Tables.** Each cache name has a table `storeflowable_cache_<name>`:
///
/// | column | type | holds |
/// | --- | --- | --- |
/// | `key` | `BYTEA PRIMARY KEY` | the encoded key |
/// | `value` | `BYTEA NOT NULL` | the encoded value |
/// | `stored_at` | `BIGINT NOT NULL` | when the entry was stored, in nanoseconds since 1970 (``CacheTime``) |
/// | `invalidated` | `BOOLEAN NOT NULL` | the invalidation mark |
/// | `format` | `INTEGER NOT NULL` | the value format the writer used (see ``PostgresCache``) |
/// | `size` | `INTEGER NOT NULL` | bytes of key and value, for the size limit |
/// | `seq` | `BIGINT NOT NULL UNIQUE` | the write's number, from the sequence `storeflowable_seq` |
///
/// Each cache name also has a table `storeflowable_claim_<name>(key BYTEA PRIMARY KEY, holder TEXT NOT
/// NULL, expires_at BIGINT NOT NULL)`, the fetch claims of ``PostgresSingleFlight``: one row per key an
/// instance is fetching, deleted when the value is written (or the fetch failed), or taken over once
/// `expires_at` (nanoseconds since 1970) has passed.
///
/// Every cache shares `storeflowable_schema(cache TEXT PRIMARY KEY, version INTEGER NOT NULL)`, which
/// records each cache table's layout version (``layoutVersion``), and the sequence `storeflowable_seq`.
/// Names are unqualified: the tables go to the first schema of the connection's `search_path`.
public enum PostgresCacheSchema {
    /// The version of the table layout that this library creates, reads and writes.
    public static let layoutVersion = PostgresCacheTable.layoutVersion

    /// Creates the table of the cache `name` (and the shared schema table and sequence) if missing,
    /// and checks that its recorded layout is this library's.
    ///
    /// Idempotent, and safe when several processes or tasks run it at once: the statements run in one
    /// transaction holding a transaction-scoped advisory lock (`pg_advisory_xact_lock`), so migrations
    /// happen one at a time and each sees what the previous one committed. Existing rows are never
    /// touched. A table that already exists without a row in `storeflowable_schema` is recorded as
    /// layout ``layoutVersion`` if its columns are the cache's, else left alone with
    /// ``PostgresCacheError/schemaMismatch(found:expected:)`` (`found` 0: not a layout of this library).
    ///
    /// - Parameters:
    ///   - name: The cache name: `[a-z][a-z0-9_]{0,42}`.
    ///   - client: The connection pool; its `run()` must be running.
    ///   - timeout: The longest wait for the database (a migration may wait for another's lock).
    /// - Throws: ``PostgresCacheError/invalidName(_:)``; ``PostgresCacheError/schemaMismatch(found:expected:)``
    ///   when the table was created with another layout (it is left alone);
    ///   ``PostgresCacheError/databaseFailed(operation:sqlState:message:)`` or
    ///   ``PostgresCacheError/timedOut(operation:after:)`` when the database fails or does not answer.
    public static func migrate(
        name: String, client: PostgresClient, timeout: Duration = .seconds(30)
    ) async throws(PostgresCacheError) {
        let table = try PostgresCacheTable(name: name)
        let database = PostgresCacheDatabase(client: client, timeout: timeout)
        // One statement, so one transaction: the advisory lock is held until every object exists. A DO
        // block takes no bound parameters; the names are validated identifiers and the numbers are
        // constants.
        let migration = PostgresQuery(
            unsafeSQL: """
                DO $storeflowable$
                BEGIN
                    PERFORM pg_advisory_xact_lock(\(PostgresCacheTable.migrationLock));
                    CREATE TABLE IF NOT EXISTS \(PostgresCacheTable.schemaTable) (
                        cache TEXT PRIMARY KEY, version INTEGER NOT NULL);
                    CREATE SEQUENCE IF NOT EXISTS \(PostgresCacheTable.sequence);
                    -- A table of the cache's name that this library did not record is adopted only if its
                    -- columns are the cache's.
                    IF to_regclass('\(table.table)') IS NOT NULL
                        AND NOT EXISTS (
                            SELECT 1 FROM \(PostgresCacheTable.schemaTable) WHERE cache = '\(table.name)')
                        AND (SELECT array_agg(column_name::text ORDER BY ordinal_position)
                             FROM information_schema.columns
                             WHERE table_schema = current_schema() AND table_name = '\(table.table)')
                            IS DISTINCT FROM
                            ARRAY['key', 'value', 'stored_at', 'invalidated', 'format', 'size', 'seq']
                    THEN
                        RAISE EXCEPTION 'table \(table.table) exists with another layout' USING ERRCODE = 'SF001';
                    END IF;
                    CREATE TABLE IF NOT EXISTS \(table.table) (
                        key BYTEA PRIMARY KEY, value BYTEA NOT NULL, stored_at BIGINT NOT NULL,
                        invalidated BOOLEAN NOT NULL, format INTEGER NOT NULL, size INTEGER NOT NULL,
                        seq BIGINT NOT NULL UNIQUE);
                    -- Fetch claims of PostgresSingleFlight: one row per key being fetched, with its holder
                    -- and when its lease ends (nanoseconds since 1970, by the instances' cache clock).
                    CREATE TABLE IF NOT EXISTS \(table.claimTable) (
                        key BYTEA PRIMARY KEY, holder TEXT NOT NULL, expires_at BIGINT NOT NULL);
                    INSERT INTO \(PostgresCacheTable.schemaTable) (cache, version)
                        VALUES ('\(table.name)', \(PostgresCacheTable.layoutVersion))
                        ON CONFLICT (cache) DO NOTHING;
                END
                $storeflowable$
                """)
        do throws(PostgresCacheError) {
            try await database.execute("migrate", migration)
        } catch {
            if case .databaseFailed(_, "SF001", _) = error {
                throw .schemaMismatch(found: 0, expected: layoutVersion)
            }
            throw error
        }
        try await check(table, database: database)
    }

    /// Checks that the table of `table` exists with this library's layout.
    ///
    /// - Parameters:
    ///   - table: The cache's names.
    ///   - database: Where to look.
    /// - Throws: ``PostgresCacheError/notMigrated(name:)`` when the schema table, the cache's row in it
    ///   or the cache's table is missing; ``PostgresCacheError/schemaMismatch(found:expected:)`` when the
    ///   recorded version differs; a database error.
    static func check(_ table: PostgresCacheTable, database: PostgresCacheDatabase) async throws(PostgresCacheError) {
        let schemaTable = PostgresCacheTable.schemaTable
        let tableName = table.table
        let exists = try await database.query(
            "open", "SELECT to_regclass(\(schemaTable)) IS NOT NULL, to_regclass(\(tableName)) IS NOT NULL"
        ) { rows in
            var found: (schema: Bool, table: Bool) = (false, false)
            for row in rows { found = try row.decode((Bool, Bool).self) }
            return found.schema && found.table
        }
        guard exists else { throw .notMigrated(name: table.name) }
        let name = table.name
        let version = try await database.query(
            "open", "SELECT version FROM \(unescaped: schemaTable) WHERE cache = \(name)"
        ) { rows in
            var version: Int32?
            for row in rows { version = try row.decode(Int32.self) }
            return version
        }
        guard let version else { throw .notMigrated(name: table.name) }
        guard Int(version) == PostgresCacheTable.layoutVersion else {
            throw .schemaMismatch(found: Int(version), expected: PostgresCacheTable.layoutVersion)
        }
    }
}
