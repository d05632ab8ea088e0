import Foundation
import Logging

/// One entry a ``CapturingLogHandler`` received.
struct LogEntry: Equatable, CustomStringConvertible {
    let level: Logger.Level
    let message: String
    /// Every metadata value, as its description.
    let metadata: [String: String]

    var description: String {
        let details = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return "\(level) \(message) [\(details.joined(separator: " "))]"
    }
}

/// The entries a ``CapturingLogHandler`` received, oldest first; safe to use from any thread.
final class LogEntries: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [LogEntry] = []

    func append(_ entry: LogEntry) {
        lock.withLock { entries.append(entry) }
    }

    var all: [LogEntry] { lock.withLock { entries } }
}

/// A `LogHandler` that keeps every entry in memory, in a ``LogEntries`` the test reads.
struct CapturingLogHandler: LogHandler {
    let entries: LogEntries
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    // `log(event:)` is the method swift-log asks handlers to implement since it has `LogEvent` (the
    // flat-parameter one is deprecated): these tests need such a swift-log; the observer needs 1.5.0.
    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        entries.append(
            LogEntry(level: event.level, message: event.message.description, metadata: merged.mapValues(\.description)))
    }
}

extension Logger {
    /// A logger at `level` whose entries go to `entries`.
    static func capturing(into entries: LogEntries, level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "test") { _ in CapturingLogHandler(entries: entries) }
        logger.logLevel = level
        return logger
    }
}
