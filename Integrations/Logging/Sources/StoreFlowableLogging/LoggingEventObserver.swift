public import Logging
public import StoreFlowable

/// A `StoreEventObserver` that writes the events of StoreFlowable's stores to a swift-log `Logger`.
///
/// Pass it to the manager of your stores; the entries go to the logger you give, or to a logger labelled
/// `StoreFlowable` from the logging backend the program bootstrapped (`LoggingSystem.bootstrap(_:)`):
///
/// ```swift
/// var logger = Logger(label: "com.example.users")
/// logger.logLevel = .info
/// let users = KeyedStore(
///     cache: MemoryCache<Int, User>(),
///     manager: FlowableDataStateManager(observer: LoggingEventObserver(logger: logger))
/// ) { id in
///     try await api.get(User.self, "/users/\(id)")
/// }
/// ```
///
/// Each event is one entry, with a short message that is the same for every event of its kind, at this
/// level:
///
/// - `debug`: the everyday path. `cache hit`, `cache miss`, `joined fetch`, `fetch started`,
///   `fetch succeeded`.
/// - `info`: worth seeing in production. `retry scheduled`, `stale value served`, `batch dispatched`,
///   `invalidated`, `reloaded`.
/// - `warning`: something failed. `fetch failed` (also when a retry follows), `cache read failed`,
///   `stale mark failed`.
///
/// A fetch that ended because nobody waited for it any more (its error is a `CancellationError` or
/// `StoreFlowableError.originCancelled`) is not a failure: it is written as `fetch cancelled`, at
/// `debug`. To choose other levels, pass `level:`; ``defaultLevel(of:)`` is the list above, which your
/// function can fall back on.
///
/// The details are metadata. Every entry has `data_type` (the stores' data type, as `String(describing:)`
/// writes it) and, but for a batch's, `key`; as the kind has them, `freshness`, `attempt`, `duration`,
/// `error`, `will_retry`, `delay`, `reason` and `batch_size`.
///
/// Keys are fine in logs, unlike in metric dimensions: a log entry is one record, not a time series a
/// backend keeps for every distinct value. A key is written as `String(describing:)` writes it; give
/// keys that hold what must not reach logs (a token, say) a `description` that leaves it out.
///
/// Nothing is built for an entry below the logger's level: the message and metadata are only made when
/// the logger writes the entry.
public struct LoggingEventObserver: StoreEventObserver {
    /// The logger the entries are written to.
    public let logger: Logger

    /// The level each event is written at.
    public let level: @Sendable (StoreEvent.Kind) -> Logger.Level

    /// Creates an observer that writes the events to `logger`.
    ///
    /// ```swift
    /// // Stale values served are worth a warning in this service; the rest as by default.
    /// let observer = LoggingEventObserver(logger: logger) { kind in
    ///     if case .staleServed = kind { return .warning }
    ///     return LoggingEventObserver.defaultLevel(of: kind)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - logger: The logger; by default one labelled `StoreFlowable` from the bootstrapped backend.
    ///   - level: The level of each event; ``defaultLevel(of:)`` by default. It is called on the thread
    ///     that reports the event, for every event, so keep it cheap.
    public init(
        logger: Logger = Logger(label: "StoreFlowable"),
        level: @escaping @Sendable (StoreEvent.Kind) -> Logger.Level = LoggingEventObserver.defaultLevel(of:)
    ) {
        self.logger = logger
        self.level = level
    }

    /// Writes `event` as one entry, at its kind's level (see above).
    ///
    /// - Parameter event: The event a store reported.
    public func observe(_ event: StoreEvent) {
        logger.log(level: level(event.kind), "\(Self.message(of: event.kind))", metadata: metadata(of: event))
    }

    /// The level of an event unless the observer was given another: `debug` for the everyday path and
    /// for a cancelled fetch, `info` for what is worth seeing in production, `warning` for failures.
    ///
    /// - Parameter kind: What happened.
    /// - Returns: The level to write it at.
    @Sendable
    public static func defaultLevel(of kind: StoreEvent.Kind) -> Logger.Level {
        switch kind {
        case .cacheHit, .cacheMiss, .joinedFetch, .fetchStarted, .fetchSucceeded: .debug
        case .fetchFailed(_, _, let error, _) where isCancellation(error): .debug
        case .retryScheduled, .staleServed, .batchDispatched, .invalidated, .reloaded: .info
        case .fetchFailed, .cacheReadFailed, .cacheEntryCorrupt, .staleMarkFailed: .warning
        }
    }

    /// Whether `error` says the fetch was abandoned rather than failed.
    private static func isCancellation(_ error: any Error) -> Bool {
        switch error {
        case is CancellationError, StoreFlowableError.originCancelled: true
        default: false
        }
    }

    /// The message of entries of `kind`: the same for every event of the kind, so that entries group.
    private static func message(of kind: StoreEvent.Kind) -> String {
        switch kind {
        case .cacheHit: "cache hit"
        case .cacheMiss: "cache miss"
        case .cacheReadFailed: "cache read failed"
        case .cacheEntryCorrupt: "cache entry corrupt"
        case .joinedFetch: "joined fetch"
        case .fetchStarted: "fetch started"
        case .fetchSucceeded: "fetch succeeded"
        case .fetchFailed(_, _, let error, _) where isCancellation(error): "fetch cancelled"
        case .fetchFailed: "fetch failed"
        case .retryScheduled: "retry scheduled"
        case .staleServed: "stale value served"
        case .batchDispatched: "batch dispatched"
        case .invalidated: "invalidated"
        case .reloaded: "reloaded"
        case .staleMarkFailed: "stale mark failed"
        }
    }

    private func metadata(of event: StoreEvent) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["data_type": "\(event.dataType)"]
        if let key = event.key { metadata["key"] = "\(key)" }
        switch event.kind {
        case .cacheHit(let freshness):
            metadata["freshness"] = "\(freshness)"
        case .cacheMiss(let freshness):
            if let freshness { metadata["freshness"] = "\(freshness)" }
        case .cacheReadFailed(let error), .staleMarkFailed(let error):
            metadata["error"] = "\(error)"
        case .cacheEntryCorrupt(let reason):
            metadata["reason"] = "\(reason)"
        case .joinedFetch, .invalidated, .reloaded:
            break
        case .fetchStarted(let attempt):
            metadata["attempt"] = "\(attempt)"
        case .fetchSucceeded(let attempt, let duration):
            metadata["attempt"] = "\(attempt)"
            metadata["duration"] = "\(duration)"
        case .fetchFailed(let attempt, let duration, let error, let willRetry):
            metadata["attempt"] = "\(attempt)"
            metadata["duration"] = "\(duration)"
            metadata["error"] = "\(error)"
            metadata["will_retry"] = "\(willRetry)"
        case .retryScheduled(let attempt, let delay):
            metadata["attempt"] = "\(attempt)"
            metadata["delay"] = "\(delay)"
        case .staleServed(.revalidating):
            metadata["reason"] = "revalidating"
        case .staleServed(.originFailed(let error)):
            metadata["reason"] = "origin_failed"
            metadata["error"] = "\(error)"
        case .batchDispatched(let size):
            metadata["batch_size"] = "\(size)"
        }
        return metadata
    }
}
