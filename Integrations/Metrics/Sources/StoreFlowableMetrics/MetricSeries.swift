/// One time series a ``MetricsEventObserver`` counts into, for each data type: its metric's name (before
/// the prefix) and its dimension besides `data_type`.
enum MetricSeries: UInt8, Hashable, Sendable {
    case cacheReadHitFresh, cacheReadHitStale, cacheReadMiss, cacheReadFailed
    case corruptEntry
    case fetchJoined, fetchStarted, fetchSucceeded, fetchFailed
    case fetchSucceededDuration, fetchFailedDuration
    case retryScheduled
    case staleServedRevalidating, staleServedOriginFailed
    case batchSize
    case invalidation, reload, staleMarkFailure

    /// The metric's name, without the observer's prefix.
    var name: String {
        switch self {
        case .cacheReadHitFresh, .cacheReadHitStale, .cacheReadMiss, .cacheReadFailed: "cache_reads"
        case .corruptEntry: "corrupt_cache_entries"
        case .fetchJoined, .fetchStarted, .fetchSucceeded, .fetchFailed: "fetches"
        case .fetchSucceededDuration, .fetchFailedDuration: "fetch_duration"
        case .retryScheduled: "retries_scheduled"
        case .staleServedRevalidating, .staleServedOriginFailed: "stale_served"
        case .batchSize: "batch_size"
        case .invalidation: "invalidations"
        case .reload: "reloads"
        case .staleMarkFailure: "stale_mark_failures"
        }
    }

    /// The series' dimension besides `data_type`, if it has one.
    var dimension: (String, String)? {
        switch self {
        case .cacheReadHitFresh: ("result", "hit_fresh")
        case .cacheReadHitStale: ("result", "hit_stale")
        case .cacheReadMiss: ("result", "miss")
        case .cacheReadFailed: ("result", "read_failed")
        case .fetchJoined: ("outcome", "joined")
        case .fetchStarted: ("outcome", "started")
        case .fetchSucceeded, .fetchSucceededDuration: ("outcome", "succeeded")
        case .fetchFailed, .fetchFailedDuration: ("outcome", "failed")
        case .staleServedRevalidating: ("reason", "revalidating")
        case .staleServedOriginFailed: ("reason", "origin_failed")
        case .corruptEntry, .retryScheduled, .batchSize, .invalidation, .reload, .staleMarkFailure: nil
        }
    }
}
