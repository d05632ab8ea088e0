public import CoreMetrics
public import StoreFlowable

/// A `StoreEventObserver` that forwards the events of StoreFlowable's stores to swift-metrics.
///
/// Pass it to the manager of your stores; the metrics go to the backend the program bootstrapped
/// (`MetricsSystem.bootstrap(_:)`), or to the `factory` you give:
///
/// ```swift
/// let users = KeyedStore(
///     cache: MemoryCache<Int, User>(),
///     manager: FlowableDataStateManager(observer: MetricsEventObserver())
/// ) { id in
///     try await api.get(User.self, "/users/\(id)")
/// }
/// ```
///
/// The metrics, named with the default prefix. Each has the dimension `data_type`, the stores' data type
/// as `String(describing:)` writes it (`User`, `Array<Article>`), and at most one more:
///
/// - `storeflowable_cache_reads` (counter), by `result`: `hit_fresh`, `hit_stale`, `miss`, `read_failed`.
/// - `storeflowable_fetches` (counter), by `outcome`: `started`, `succeeded`, `failed`, and `joined` for a
///   caller that joined a fetch already running.
/// - `storeflowable_fetch_duration` (timer), by `outcome`: `succeeded`, `failed`. How long each origin
///   call took.
/// - `storeflowable_retries_scheduled` (counter): the retries a retry policy scheduled.
/// - `storeflowable_stale_served` (counter), by `reason`: `revalidating`, `origin_failed`. Stale values
///   served instead of fresh ones.
/// - `storeflowable_invalidations` (counter): the `invalidate()` calls that marked a cached value stale.
/// - `storeflowable_reloads` (counter): the keys read again from the cache after a change made elsewhere
///   (`reloadFromCache()`).
/// - `storeflowable_stale_mark_failures` (counter): the reloads that could not mark a value stale.
/// - `storeflowable_batch_size` (recorder): the number of keys of each batched origin call.
///
/// A cache read that throws counts as `read_failed`; when the store then fetches, the same read counts as
/// a `miss` too. Every attempt of a retried fetch counts as `started`, then `succeeded` or `failed`.
///
/// The key of an event is never a dimension. Keys are unbounded (a user id, a URL), and a metrics
/// backend keeps one time series per distinct set of dimensions: a key dimension would grow the backend
/// without limit. Log keys instead (`LoggingEventObserver`, in the `StoreFlowableLogging` package).
///
/// The observer asks the factory for each metric by label and dimensions once, the first time an event
/// of that data type and series arrives, as `Counter(label:dimensions:)` does, and keeps the handler for
/// the next events; copies of an observer share what they kept. Backends return one metric for one label
/// and set of dimensions, so two observers over one factory count into the same metrics.
public struct MetricsEventObserver: StoreEventObserver {
    /// The metrics backend the events are counted in.
    public let factory: any MetricsFactory
    /// The start of every metric's label, followed by `_`; no prefix (and no `_`) when empty.
    public let labelPrefix: String
    /// The handlers the factory made, by data type and series.
    private let handles = MetricHandles()

    /// Creates an observer that counts the events in `factory`.
    ///
    /// - Parameters:
    ///   - factory: The metrics backend; by default the one the program bootstrapped
    ///     (`MetricsSystem.factory`). Pass a `TestMetrics` in tests.
    ///   - labelPrefix: The start of every metric's label: `storeflowable` gives
    ///     `storeflowable_cache_reads`.
    public init(factory: any MetricsFactory = MetricsSystem.factory, labelPrefix: String = "storeflowable") {
        self.factory = factory
        self.labelPrefix = labelPrefix
    }

    /// Counts `event` in its metric (see the list above); the end of an origin call also records its
    /// duration.
    ///
    /// The factory is asked for each metric once per data type and series (as `Counter` would be kept
    /// by a user), then the handler is reused: an event costs one lookup in a small table under a lock
    /// held for that lookup only, and no allocation. The factory is never called under that lock.
    ///
    /// - Parameter event: The event a store reported.
    public func observe(_ event: StoreEvent) {
        switch event.kind {
        case .cacheHit(let freshness):
            count(freshness == .fresh ? .cacheReadHitFresh : .cacheReadHitStale, event)
        case .cacheMiss:
            count(.cacheReadMiss, event)
        case .cacheReadFailed:
            count(.cacheReadFailed, event)
        case .cacheEntryCorrupt:
            count(.corruptEntry, event)
        case .joinedFetch:
            count(.fetchJoined, event)
        case .fetchStarted:
            count(.fetchStarted, event)
        case .fetchSucceeded(_, let duration):
            count(.fetchSucceeded, event)
            time(.fetchSucceededDuration, duration, event)
        case .fetchFailed(_, let duration, _, _):
            count(.fetchFailed, event)
            time(.fetchFailedDuration, duration, event)
        case .retryScheduled:
            count(.retryScheduled, event)
        case .staleServed(.revalidating):
            count(.staleServedRevalidating, event)
        case .staleServed(.originFailed):
            count(.staleServedOriginFailed, event)
        case .batchDispatched(let size):
            let key = MetricHandles.Key(dataType: ObjectIdentifier(event.dataType), series: .batchSize)
            handles.recorder(for: key) {
                factory.makeRecorder(
                    label: label(MetricSeries.batchSize.name), dimensions: dimensions(.batchSize, event),
                    aggregate: true)
            }
            .record(Int64(size))
        case .invalidated:
            count(.invalidation, event)
        case .reloaded:
            count(.reload, event)
        case .staleMarkFailed:
            count(.staleMarkFailure, event)
        }
    }

    // The factory's handlers are used directly, as `Counter` and `Timer` use them: initializers of those
    // types that take a factory only came with later releases of swift-metrics than this package needs.

    private func label(_ name: String) -> String {
        labelPrefix.isEmpty ? name : labelPrefix + "_" + name
    }

    /// The dimensions of `series` for the data type of `event`.
    private func dimensions(_ series: MetricSeries, _ event: StoreEvent) -> [(String, String)] {
        [("data_type", String(describing: event.dataType))] + (series.dimension.map { [$0] } ?? [])
    }

    private func count(_ series: MetricSeries, _ event: StoreEvent) {
        let key = MetricHandles.Key(dataType: ObjectIdentifier(event.dataType), series: series)
        handles.counter(for: key) {
            factory.makeCounter(label: label(series.name), dimensions: dimensions(series, event))
        }
        .increment(by: 1)
    }

    private func time(_ series: MetricSeries, _ duration: Duration, _ event: StoreEvent) {
        let key = MetricHandles.Key(dataType: ObjectIdentifier(event.dataType), series: series)
        handles.timer(for: key) {
            factory.makeTimer(label: label(series.name), dimensions: dimensions(series, event))
        }
        .recordNanoseconds(Self.nanoseconds(duration))
    }

    /// `duration` in whole nanoseconds, saturating at the bounds of `Int64` (about 292 years).
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflow, !overflowAgain else { return seconds < 0 ? .min : .max }
        return total
    }
}
