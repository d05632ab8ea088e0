/// Something a ``DiskCache`` noticed and handled on its own, reported to the `events` handler passed
/// to its initialiser: damaged files, expired entries and leftovers removed, entries evicted, files
/// that could not be read or removed.
///
/// None of these is an error of the call that found it: a damaged or unreadable file is a miss, a
/// failed cleanup is retried the next time. They are reported so that you can log or count them.
///
/// The handler is called synchronously on the task that noticed the event, after the cache released
/// every lock and per-key turn it held, possibly from several tasks at once. Keep it short and
/// thread-safe; it may call the cache (from a new task, since it is not `async`).
public enum DiskCacheEvent: Sendable, Hashable, CustomStringConvertible {
    /// The file at `path` was damaged (see ``DiskCacheFileProblem``): it was deleted, and the read that
    /// found it returned a miss.
    case removedDamagedFile(path: String, problem: DiskCacheFileProblem)
    /// The entry file at `path` was past its policy's lifetime when read: it was deleted, and the read
    /// returned a miss.
    case removedExpiredEntry(path: String)
    /// The entry file at `path` (`bytes` long) was removed because the folder went over the size limit
    /// and it was the least recently used.
    case evicted(path: String, bytes: Int)
    /// A temporary file left by a write that never finished (the process crashed or was killed) was
    /// removed.
    case removedTemporaryFile(path: String)
    /// The file or folder at `path` could not be read (`code` is the `errno`); the read was a miss.
    case readFailed(path: String, code: Int32)
    /// The damaged, expired, evicted or leftover file at `path` could not be removed (`code` is the
    /// `errno`); it is tried again when next found.
    case removeFailed(path: String, code: Int32)

    /// The event in one line, for logs.
    public var description: String {
        switch self {
        case .removedDamagedFile(let path, let problem): "removed damaged file \(path) (\(problem))"
        case .removedExpiredEntry(let path): "removed expired entry \(path)"
        case .evicted(let path, let bytes): "evicted \(path) (\(bytes) bytes)"
        case .removedTemporaryFile(let path): "removed leftover temporary file \(path)"
        case .readFailed(let path, let code): "could not read \(path): \(DiskCacheError.message(code))"
        case .removeFailed(let path, let code): "could not remove \(path): \(DiskCacheError.message(code))"
        }
    }
}
