/// The names a ``PostgresCache`` uses in the database, and the layout version of its table.
///
/// Each cache has a table `storeflowable_cache_<name>`:
///
/// ```sql
/// key BYTEA PRIMARY KEY, value BYTEA NOT NULL, stored_at BIGINT NOT NULL, invalidated BOOLEAN NOT NULL,
/// format INTEGER NOT NULL, size INTEGER NOT NULL, seq BIGINT NOT NULL UNIQUE
/// ```
///
/// All caches share the table `storeflowable_schema(cache TEXT PRIMARY KEY, version INTEGER NOT NULL)`,
/// which records each cache's layout version, and the sequence `storeflowable_seq`, which numbers
/// writes.
struct PostgresCacheTable: Sendable {
    /// The layout version this library reads and writes.
    static let layoutVersion = 1
    /// The table recording each cache's layout version.
    static let schemaTable = "storeflowable_schema"
    /// The sequence numbering every write of every cache (the `seq` column).
    static let sequence = "storeflowable_seq"
    /// The key of the transaction-scoped advisory lock that migrations hold: "StoreFlo" in ASCII.
    static let migrationLock: Int64 = 0x5374_6F72_6546_6C6F

    /// The cache name.
    let name: String
    /// The cache's table: `storeflowable_cache_<name>`.
    let table: String
    /// The table of the cache's fetch claims (see ``PostgresSingleFlight``): `storeflowable_claim_<name>`,
    /// 63 bytes at most like the cache's table.
    let claimTable: String
    /// The cache's notification channel: `storeflowable_<name>` (at most 56 bytes, within PostgreSQL's
    /// 63-byte limit for channel names).
    let channel: String

    /// Validates `name` and names the cache's table.
    ///
    /// The name is spliced into statements (a table name cannot be a bound parameter), so it is kept to
    /// a plain lower-case identifier; 43 characters at most keep the table name within PostgreSQL's
    /// 63-byte identifier limit, past which the server would silently truncate it (and two long names
    /// would share a table).
    ///
    /// - Parameter name: The cache name.
    /// - Throws: ``PostgresCacheError/invalidName(_:)`` unless it matches `[a-z][a-z0-9_]{0,42}`.
    init(name: String) throws(PostgresCacheError) {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first), bytes.count <= 43,
            bytes.allSatisfy({ byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
            })
        else { throw .invalidName(name) }
        self.name = name
        table = "storeflowable_cache_" + name
        claimTable = "storeflowable_claim_" + name
        channel = "storeflowable_" + name
    }
}
