/// Something a ``PostgresCache`` noticed and handled on its own, reported to the `events` handler
/// passed to its initialiser: rows of another value format, expired or undecodable rows removed, rows
/// evicted by the size limit, cleanups that failed, and what its change listener
/// (``PostgresCache/listenForChanges(retry:clock:onChange:)``) went through.
///
/// None of these is an error of the call that found it: such a row is a miss, a failed cleanup is
/// tried again the next time the row is found, and the listener reconnects on its own. They are
/// reported so that you can log or count them.
///
/// `key` is the row's encoded key as text (its bytes read as UTF-8, invalid bytes replaced): the key
/// itself for the default JSON coder.
///
/// The handler is called synchronously on the task that noticed the event, after the statement that
/// handled it returned, possibly from several tasks at once. Keep it short and thread-safe; it may call
/// the cache (from a new task, since it is not `async`).
public enum PostgresCacheEvent: Sendable, Hashable, CustomStringConvertible {
    /// The row of `key` was written with value format `format`, not the cache's: it was deleted, and the
    /// read that found it returned a miss.
    case removedOtherFormat(key: String, format: Int)
    /// The row of `key` was past its policy's lifetime when read: it was deleted, and the read returned
    /// a miss.
    case removedExpiredEntry(key: String)
    /// The coder could not decode the row's value (on a read) or key (while invalidating by predicate),
    /// for `reason`: the row was deleted, and a read returned a miss.
    case removedUndecodableEntry(key: String, reason: String)
    /// The row of `key` (`bytes` of key and value) was deleted because the table went over the size
    /// limit and it was the oldest written.
    case evicted(key: String, bytes: Int)
    /// The row of `key` should have been deleted (another format, expired, undecodable) but the
    /// statement failed (`error` describes why); it stays a miss and is tried again when next found.
    case removeFailed(key: String, error: String)
    /// The change listener listens on `channel`, on a connection of its own: after it starts and after
    /// each reconnection. It delivers ``PostgresCacheChange/all`` next.
    case listenerConnected(channel: String)
    /// The change listener lost its connection, or could not connect and listen, for the `attempt`-th
    /// time in a row (`error` describes why); it tries again after `retryAfter` on its clock. Changes
    /// notified until it listens again are not received: it then delivers ``PostgresCacheChange/all``.
    case listenerDisconnected(error: String, attempt: Int, retryAfter: Duration)
    /// The change listener received a notification on the cache's channel that is not one a cache
    /// sends, or whose key the coder cannot decode (`reason` says which), and ignored it. `payload` is
    /// the notification's text, cut to its first 200 characters.
    case malformedNotification(payload: String, reason: String)

    /// The event in one line, for logs.
    public var description: String {
        switch self {
        case .removedOtherFormat(let key, let format): "removed \(key) (value format \(format))"
        case .removedExpiredEntry(let key): "removed expired entry \(key)"
        case .removedUndecodableEntry(let key, let reason): "removed undecodable entry \(key): \(reason)"
        case .evicted(let key, let bytes): "evicted \(key) (\(bytes) bytes)"
        case .removeFailed(let key, let error): "could not remove \(key): \(error)"
        case .listenerConnected(let channel): "listening on \(channel)"
        case .listenerDisconnected(let error, let attempt, let retryAfter):
            "listener disconnected (attempt \(attempt)), retrying after \(retryAfter): \(error)"
        case .malformedNotification(let payload, let reason):
            "ignored notification \(String(reflecting: payload)): \(reason)"
        }
    }
}
