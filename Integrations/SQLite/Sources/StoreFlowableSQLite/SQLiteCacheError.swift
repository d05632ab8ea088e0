/// Why an ``SQLiteCache`` call failed.
///
/// A read that fails throws too: stores built on the cache count it as a miss (and report it to their
/// observer as `cacheReadFailed`), so a broken database never serves a wrong value. A write that fails
/// leaves the key's previous entry as it was: each write is one SQLite statement, which applies whole or
/// not at all.
public enum SQLiteCacheError: Error, CustomStringConvertible {
    /// The cache name is not a lowercase ASCII letter followed by at most 47 lowercase letters, digits
    /// and underscores (it names the table).
    case invalidName(String)
    /// The cache's table was made by another version of this package: its layout version in
    /// `storeflowable_schema` is `found`, this version reads `expected`. Entries are never read or written
    /// through a layout the cache does not know; delete the table (and its row in `storeflowable_schema`)
    /// or use a new cache name.
    case schemaMismatch(table: String, found: Int, expected: Int)
    /// A table of the cache's name exists but was not made by this package (its columns are not the
    /// cache's); nothing was changed.
    case unexpectedTable(String)
    /// The coder could not encode a key or a value; nothing was written.
    case encodingFailed(any Error)
    /// The entry is larger on its own (`bytes`, key and value encoded) than the cache's size limit, so it
    /// was not stored, and the key's previous entry was removed (it would be out of date).
    case entryTooLarge(bytes: Int, sizeLimit: Int)
    /// The cache was closed with ``SQLiteCache/close()``.
    case closed
    /// The calling task was cancelled before its statement ran, or while it waited for another
    /// connection's lock; the statement did not apply.
    case cancelled
    /// Another connection (another process, or another instance in this one) held the file's write lock
    /// for longer than the cache's ``SQLiteCache/lockTimeout``; the statement did not apply.
    case lockTimedOut(operation: String, after: Duration)
    /// SQLite reported an error during `operation` (opening the file, a read, a write…): the file cannot be
    /// opened or is not a database, the disk is full, the file is read-only, and so on. `underlying` is
    /// sqlite-nio's `SQLiteError`, with SQLite's code and message.
    case databaseFailed(operation: String, underlying: any Error)

    /// The error in one line, for logs.
    public var description: String {
        switch self {
        case .invalidName(let name):
            "invalid SQLite cache name \"\(name)\": use a lowercase letter, then up to 47 lowercase letters, digits or _"
        case .schemaMismatch(let table, let found, let expected):
            "table \(table) has layout version \(found); this version of StoreFlowableSQLite reads \(expected)"
        case .unexpectedTable(let table):
            "table \(table) exists but was not made by StoreFlowableSQLite"
        case .encodingFailed(let error):
            "could not encode a key or value: \(error)"
        case .entryTooLarge(let bytes, let sizeLimit):
            "entry of \(bytes) bytes is larger than the cache's size limit of \(sizeLimit) bytes"
        case .closed:
            "the SQLite cache is closed"
        case .cancelled:
            "cancelled before the statement applied"
        case .lockTimedOut(let operation, let after):
            "could not \(operation): the database file stayed locked by another connection for \(after)"
        case .databaseFailed(let operation, let underlying):
            "SQLite failed to \(operation): \(underlying)"
        }
    }
}
