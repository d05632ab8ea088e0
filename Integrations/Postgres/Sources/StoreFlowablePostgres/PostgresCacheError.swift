/// Why a ``PostgresCache`` could not be opened, migrated, read or written.
///
/// Every database failure (connection refused, the server gone mid-query, a statement the server
/// rejected) is ``databaseFailed(operation:sqlState:message:)``, and an operation that got no answer in
/// time is ``timedOut(operation:after:)``: the cache never crashes and never waits for ever on a
/// database that is unreachable. Each write is one statement, so it applies whole or not at all.
///
/// After ``timedOut(operation:after:)`` or ``cancelled(operation:)`` the caller has moved on, but
/// postgres-nio cannot take back a statement it has sent: unless the server ends it, a write may still
/// apply later, and the statement keeps its pool connection until then. Give the client's connections a
/// `statement_timeout` and a `lock_timeout` no longer than the cache's timeout
/// (`PostgresClient.Configuration.options.additionalStartupParameters`): the server then ends the
/// statement, which does not apply, and frees its connection; the cache reports the server's timeout as
/// ``timedOut(operation:after:)`` too.
public enum PostgresCacheError: Error, Sendable, CustomStringConvertible {
    /// The cache name does not match `[a-z][a-z0-9_]{0,42}`: a lower-case letter, then up to 42
    /// lower-case letters, digits or underscores, so that the table name `storeflowable_cache_<name>` is
    /// a plain identifier within PostgreSQL's 63-byte limit.
    case invalidName(String)

    /// The instance id passed to ``PostgresCache/init(name:client:policy:clock:coder:valueFormat:sizeLimit:timeout:instanceID:events:)``
    /// is not 1 to 64 ASCII letters, digits, `.`, `_` or `-` (it travels in notification payloads,
    /// whose fields are separated by spaces).
    case invalidInstanceID(String)

    /// The cache's table, or its row in `storeflowable_schema`, does not exist: run
    /// ``PostgresCache/migrate(name:client:timeout:)`` first.
    case notMigrated(name: String)

    /// `storeflowable_schema` records layout version `found` for this cache, but this version of the
    /// library reads and writes layout `expected`. The table is left alone.
    case schemaMismatch(found: Int, expected: Int)

    /// A statement failed or the connection to the server failed; `operation` names what the cache was
    /// doing (`read`, `write`, `evict`, `migrate`, …). `sqlState` is the server's five-character
    /// SQLSTATE code when the server answered (`42P01`: a table is missing), `nil` for a connection
    /// failure. `message` describes the underlying `PSQLError` (its code, the server's message, the
    /// connection error), without the statement's bound values.
    case databaseFailed(operation: String, sqlState: String?, message: String)

    /// The database did not finish `operation` within the cache's timeout (`after`): the server is
    /// down, unreachable or overloaded, or the pool could not open a connection.
    case timedOut(operation: String, after: Duration)

    /// The calling task was cancelled before the database answered; the call returned at once. A
    /// statement that had no connection yet (the task was cancelled before the call, or while the pool
    /// had no connection free) is never sent. As after ``timedOut(operation:after:)``, a statement
    /// already sent may still apply (see the type's discussion).
    case cancelled(operation: String)

    /// The coder could not encode the key or the value; `underlying` is its error.
    case encodingFailed(_ underlying: any Error)

    /// The entry (`bytes`: its encoded key and value) is larger than the cache's size limit, so it was
    /// not stored; any previous entry of the key was removed, so that it is not served in its place.
    case entryTooLarge(bytes: Int, sizeLimit: Int)

    /// A sentence describing the failure.
    public var description: String {
        switch self {
        case .invalidName(let name):
            "PostgresCache: invalid cache name \(String(reflecting: name)): it must match [a-z][a-z0-9_]{0,42}"
        case .invalidInstanceID(let id):
            "PostgresCache: invalid instance id \(String(reflecting: id)): it must be 1 to 64 of [A-Za-z0-9._-]"
        case .notMigrated(let name):
            "PostgresCache: the cache \(String(reflecting: name)) has no table; run PostgresCache.migrate first"
        case .schemaMismatch(let found, let expected):
            "PostgresCache: the table has layout version \(found), this library uses \(expected)"
        case .databaseFailed(let operation, let sqlState, let message):
            "PostgresCache: \(operation) failed\(sqlState.map { " (SQLSTATE \($0))" } ?? ""): \(message)"
        case .timedOut(let operation, let after):
            "PostgresCache: \(operation) got no answer from the database within \(after)"
        case .cancelled(let operation):
            "PostgresCache: \(operation) was cancelled before the database answered"
        case .encodingFailed(let underlying):
            "PostgresCache: the coder failed to encode: \(underlying)"
        case .entryTooLarge(let bytes, let sizeLimit):
            "PostgresCache: an entry of \(bytes) bytes is larger than the size limit of \(sizeLimit) bytes"
        }
    }
}
