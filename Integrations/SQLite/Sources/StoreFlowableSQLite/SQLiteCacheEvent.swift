/// Something an ``SQLiteCache`` noticed and handled on its own, reported to the `events` handler passed
/// to ``SQLiteCache/open(name:path:policy:clock:coder:valueFormat:sizeLimit:lockTimeout:events:)``: unreadable and
/// expired entries removed, entries evicted.
///
/// None of these is an error of the call that found it: an unreadable or expired entry is a miss. They
/// are reported so that you can log or count them. The handler is called on the task that noticed the
/// event, after the statement that handled it finished, possibly from several tasks at once: keep it
/// short and thread-safe.
public enum SQLiteCacheEvent: Sendable, Hashable, CustomStringConvertible {
    /// The entry of `key` (its encoded bytes, as text) in `table` could not be read (see
    /// ``SQLiteCacheEntryProblem``): it was deleted, and the read that found it returned a miss.
    case removedUnreadableEntry(table: String, key: String, problem: SQLiteCacheEntryProblem)
    /// The entry of `key` in `table` was past its policy's lifetime when read: it was deleted, and the
    /// read returned a miss.
    case removedExpiredEntry(table: String, key: String)
    /// A write took `table` over the size limit: its `count` oldest entries (`bytes` in all) were removed.
    case evicted(table: String, count: Int, bytes: Int)

    /// The event in one line, for logs.
    public var description: String {
        switch self {
        case .removedUnreadableEntry(let table, let key, let problem):
            "removed unreadable entry \(key) of \(table) (\(problem))"
        case .removedExpiredEntry(let table, let key):
            "removed expired entry \(key) of \(table)"
        case .evicted(let table, let count, let bytes):
            "evicted \(count) entries (\(bytes) bytes) of \(table)"
        }
    }
}

/// Why an entry of an ``SQLiteCache`` could not be read.
public enum SQLiteCacheEntryProblem: Sendable, Hashable, CustomStringConvertible {
    /// The entry was written with value format `found`, not the cache's ``SQLiteCache/valueFormat``
    /// (the value type or its encoding changed).
    case otherValueFormat(found: Int)
    /// The coder could not decode the value.
    case undecodableValue(reason: String)
    /// The coder could not decode the key (found while invalidating by predicate).
    case undecodableKey(reason: String)
    /// A column held a value of the wrong type (the row was written by hand).
    case malformedRow

    /// The problem in a few words.
    public var description: String {
        switch self {
        case .otherValueFormat(let found): "value format \(found)"
        case .undecodableValue(let reason): "undecodable value: \(reason)"
        case .undecodableKey(let reason): "undecodable key: \(reason)"
        case .malformedRow: "malformed row"
        }
    }
}
