/// The table of one named ``SQLiteCache`` and the statements that read and write it.
///
/// Layout (version ``layoutVersion``), one row per key:
///
/// | column        | type    | holds                                                             |
/// |---------------|---------|-------------------------------------------------------------------|
/// | `key`         | BLOB    | the encoded key; the primary key (the table has no rowid)         |
/// | `value`       | BLOB    | the encoded value                                                 |
/// | `stored_at`   | INTEGER | when the value was stored: nanoseconds since 1970 (`CacheTime`)   |
/// | `invalidated` | INTEGER | 1 once invalidated, until the next write                          |
/// | `format`      | INTEGER | the cache's value format when it was written                      |
/// | `size`        | INTEGER | bytes of key and value, for the size limit                        |
/// | `seq`         | INTEGER | write order (indexed): the oldest entries are evicted first        |
///
/// `storeflowable_schema(cache, version)` records the layout version of each cache table in the file, and
/// `storeflowable_counter(cache, seq)` the last `seq` handed out (kept by two triggers on the table), so
/// that a `seq` is never handed out twice.
struct SQLiteCacheTable: Sendable {
    /// The layout this version of the package reads and writes.
    static let layoutVersion = 1
    /// The table's columns, in order, as `PRAGMA table_info` lists them.
    static let columns = ["key", "value", "stored_at", "invalidated", "format", "size", "seq"]

    /// The cache's name.
    let name: String
    /// The table's name: `storeflowable_cache_` and the cache's name.
    let table: String

    /// The table of the cache `name`.
    ///
    /// - Throws: ``SQLiteCacheError/invalidName(_:)`` unless `name` is a lowercase ASCII letter followed
    ///   by at most 47 lowercase letters, digits and underscores.
    init(name: String) throws(SQLiteCacheError) {
        let bytes = Array(name.utf8)
        let isLetter = { (byte: UInt8) in byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        guard let first = bytes.first, isLetter(first), bytes.count <= 48,
            bytes.allSatisfy({ isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") })
        else { throw .invalidName(name) }
        self.name = name
        table = "storeflowable_cache_\(name)"
    }

    // MARK: Schema

    static let createSchemaTable = """
        CREATE TABLE IF NOT EXISTS storeflowable_schema (cache TEXT PRIMARY KEY NOT NULL, version INTEGER NOT NULL)
        """
    static let schemaVersion = "SELECT version FROM storeflowable_schema WHERE cache = ?1"
    static let recordSchemaVersion = "INSERT INTO storeflowable_schema (cache, version) VALUES (?1, ?2)"
    /// Whether a table or view of that name exists.
    static let tableExists = "SELECT count(*) AS found FROM sqlite_master WHERE name = ?1"

    var create: String {
        """
        CREATE TABLE "\(table)" (
            key BLOB PRIMARY KEY NOT NULL,
            value BLOB NOT NULL,
            stored_at INTEGER NOT NULL,
            invalidated INTEGER NOT NULL,
            format INTEGER NOT NULL,
            size INTEGER NOT NULL,
            seq INTEGER NOT NULL
        ) WITHOUT ROWID
        """
    }
    // The index and triggers are named outside `storeflowable_cache_`, so that no cache's name gives
    // another cache's table name (an index `storeflowable_cache_x_seq` was the table of the cache `x_seq`).
    var createSeqIndex: String {
        "CREATE INDEX IF NOT EXISTS \"storeflowable_index_\(name)_seq\" ON \"\(table)\" (seq)"
    }
    /// The write counter of every cache table in the file: `seq` only ever grows, also when the newest
    /// row is removed (a `max(seq) + 1` would hand its seq out again, and a check "unchanged since read"
    /// would then match a newer write).
    static let createCounterTable = """
        CREATE TABLE IF NOT EXISTS storeflowable_counter (cache TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL)
        """
    /// `?1` the table: its counter row, starting above every seq in it, unless it exists.
    var createCounter: String {
        """
        INSERT INTO storeflowable_counter (cache, seq) SELECT ?1, coalesce(max(seq), 0) FROM "\(table)" WHERE true
        ON CONFLICT (cache) DO NOTHING
        """
    }
    /// Keep the counter at the seq of the last write, in the write's own statement.
    var createCounterTriggers: [String] {
        ["INSERT", "UPDATE OF seq"].enumerated().map { index, event in
            """
            CREATE TRIGGER IF NOT EXISTS "storeflowable_trigger_\(name)_\(index)" AFTER \(event) ON "\(table)"
            BEGIN UPDATE storeflowable_counter SET seq = NEW.seq WHERE cache = '\(table)'; END
            """
        }
    }
    var tableInfo: String { "PRAGMA table_info(\"\(table)\")" }

    // MARK: Entries

    /// `?1` key → value, stored_at, invalidated, format, seq.
    var select: String {
        "SELECT value, stored_at, invalidated, format, seq FROM \"\(table)\" WHERE key = ?1"
    }
    /// `?1` key, `?2` value, `?3` stored_at, `?4` invalidated, `?5` format, `?6` size: one statement, so a
    /// write is whole or absent, and its `seq` is above every seq ever handed out in the table (SQLite has
    /// one writer at a time; the counter's trigger runs in the same statement).
    var upsert: String {
        """
        INSERT INTO "\(table)" (key, value, stored_at, invalidated, format, size, seq)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, (SELECT seq + 1 FROM storeflowable_counter WHERE cache = '\(table)'))
        ON CONFLICT (key) DO UPDATE SET value = excluded.value, stored_at = excluded.stored_at,
            invalidated = excluded.invalidated, format = excluded.format, size = excluded.size, seq = excluded.seq
        """
    }
    /// `?1` key.
    var delete: String { "DELETE FROM \"\(table)\" WHERE key = ?1" }
    /// `?1` key, `?2` seq: deletes the row only if no write replaced it since it was read, and returns it
    /// if it did.
    var deleteIfUnchanged: String { "DELETE FROM \"\(table)\" WHERE key = ?1 AND seq = ?2 RETURNING seq" }
    var deleteAll: String { "DELETE FROM \"\(table)\"" }
    /// `?1` key: marks in place, keeping value and time.
    var invalidate: String { "UPDATE \"\(table)\" SET invalidated = 1 WHERE key = ?1" }
    /// `?1` key, `?2` seq: marks only if no write replaced the row since it was listed.
    var invalidateIfUnchanged: String {
        "UPDATE \"\(table)\" SET invalidated = 1 WHERE key = ?1 AND seq = ?2"
    }
    /// Every key not yet invalidated, with its seq.
    var listValid: String { "SELECT key, seq FROM \"\(table)\" WHERE invalidated = 0" }
    /// `?1` size limit, `?2` the key just written: deletes the oldest rows beyond the newest ones that
    /// fit in the limit, never the key just written, and returns their sizes.
    var evict: String {
        """
        DELETE FROM "\(table)" WHERE key IN (
            SELECT key FROM (
                SELECT key, sum(size) OVER (ORDER BY seq DESC ROWS UNBOUNDED PRECEDING) AS running FROM "\(table)"
            ) WHERE running > ?1
        ) AND key <> ?2
        RETURNING size
        """
    }
}
