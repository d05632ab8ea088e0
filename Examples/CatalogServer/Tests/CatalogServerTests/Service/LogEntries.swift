import Logging
import Synchronization

/// One entry a service under test logged.
struct LogEntry: Sendable, CustomStringConvertible {
    /// Its level.
    let level: Logger.Level
    /// Its message.
    let message: String
    /// Its metadata, each value as its description.
    let metadata: [String: String]

    var description: String {
        let details = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return "\(level) \(message) [\(details.joined(separator: " "))]"
    }
}

/// The entries a service under test logged, oldest first, kept by a ``LogEntries/Handler``; safe to read
/// from any task.
final class LogEntries: Sendable {
    /// The entries so far.
    private let entries = Mutex<[LogEntry]>([])

    /// Every entry so far, oldest first.
    var all: [LogEntry] { entries.withLock { $0 } }

    /// A logger at `level` whose entries are kept here.
    ///
    /// - Parameter level: The logger's level.
    /// - Returns: The logger.
    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "catalog-service-test") { _ in Handler(entries: self) }
        logger.logLevel = level
        return logger
    }

    /// A `LogHandler` that keeps every entry in its ``LogEntries``.
    struct Handler: LogHandler {
        /// Where the entries go.
        let entries: LogEntries
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let entry = LogEntry(
                level: event.level, message: event.message.description, metadata: merged.mapValues(\.description))
            entries.entries.withLock { $0.append(entry) }
        }
    }
}
