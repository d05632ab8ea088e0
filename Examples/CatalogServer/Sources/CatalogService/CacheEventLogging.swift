import Logging
import StoreFlowablePostgres
import StoreFlowableSQLite

/// Writes what the caches and the fleet-wide single flight report on their own (entries they dropped,
/// the listener's connection, claims) to the service's log, each at the level it deserves: `debug` for
/// the everyday path, `info` for what an operator may want to see, `warning` for what went wrong.
enum CacheEventLogging {
    /// The handler of an SQLite cache's events.
    ///
    /// - Parameter logger: The service's logger.
    /// - Returns: A handler for `SQLiteCache.open(events:)`.
    static func sqlite(_ logger: Logger) -> @Sendable (SQLiteCacheEvent) -> Void {
        { event in
            let level: Logger.Level =
                switch event {
                case .removedExpiredEntry: .debug
                case .evicted: .info
                case .removedUnreadableEntry: .warning
                }
            logger.log(level: level, "sqlite cache: \(event)")
        }
    }

    /// The handler of a PostgreSQL cache's events.
    ///
    /// - Parameter logger: The service's logger.
    /// - Returns: A handler for `PostgresCache(events:)`.
    static func postgres(_ logger: Logger) -> @Sendable (PostgresCacheEvent) -> Void {
        { event in
            let level: Logger.Level =
                switch event {
                case .removedExpiredEntry, .removedOtherFormat: .debug
                case .evicted, .listenerConnected: .info
                case .removedUndecodableEntry, .removeFailed, .listenerDisconnected, .malformedNotification: .warning
                }
            logger.log(level: level, "postgres cache: \(event)")
        }
    }

    /// The handler of a single flight's events.
    ///
    /// - Parameter logger: The service's logger.
    /// - Returns: A handler for `PostgresSingleFlight(events:)`.
    static func singleFlight(_ logger: Logger) -> @Sendable (PostgresSingleFlightEvent) -> Void {
        { event in
            let level: Logger.Level =
                switch event {
                case .claimed, .waiting, .usedValueOfOtherInstance: .debug
                case .tookOverExpiredClaim: .notice
                case .claimUnavailable: .warning
                }
            logger.log(level: level, "single flight: \(event)")
        }
    }
}
