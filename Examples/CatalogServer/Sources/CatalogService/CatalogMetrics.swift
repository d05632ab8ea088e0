public import Prometheus

/// The service's metrics, in one Prometheus registry of its own: the stores' events (through the
/// `PrometheusMetricsFactory` handed to `MetricsEventObserver`) and the service's own, which it records
/// here. `GET /metrics` answers ``exposition()``.
///
/// The registry is the service's, not swift-metrics' global one: several services in one process (the
/// tests run two) keep their counts apart, and nothing is bootstrapped.
///
/// The service's own metrics:
/// - `catalog_http_requests_total` (counter), by `route` (the route's pattern, such as
///   `/products/{id}`), `method` and `status`: the answers sent.
/// - `catalog_http_request_duration_seconds` (histogram), by `route`: from the request to the end of
///   its answer's body (for `/events`, the life of the stream).
/// - `catalog_upstream_requests_total` (counter), by `kind` (`product`, `batch`, `page`, `write`,
///   `direct`) and `outcome` (`success`, `failure`): the requests sent to the upstream.
/// - `catalog_event_streams_open` (gauge): the `/events` streams open now.
/// - `catalog_store_tracked_keys` (gauge): the product keys the store's manager tracks, read at each
///   scrape (a key is tracked while it has subscribers, callers or a fetch in flight).
/// - `catalog_cache_update_failures_total` (counter): writes the upstream stored whose cache update
///   failed (the product was then marked stale, or, if that failed too, left to its freshness).
public final class CatalogMetrics: Sendable {
    /// The registry every metric of the service is in.
    public let registry: PrometheusCollectorRegistry
    /// The swift-metrics factory over ``registry``, for `MetricsEventObserver`.
    public let factory: PrometheusMetricsFactory
    /// The `/events` streams open now.
    private let openEventStreams: Gauge
    /// The product keys tracked at the last scrape.
    private let trackedKeys: Gauge
    /// The failed cache updates after upstream writes.
    private let cacheUpdateFailures: Counter

    /// The buckets of the request durations, from half a millisecond to ten seconds.
    private static let durationBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(2), .seconds(5), .seconds(10),
    ]

    /// Makes the registry and the service's gauges.
    public init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        self.factory = factory
        openEventStreams = registry.makeGauge(descriptor: Self.openEventStreamsName)
        trackedKeys = registry.makeGauge(descriptor: Self.trackedKeysName)
        cacheUpdateFailures = registry.makeCounter(descriptor: Self.cacheUpdateFailuresName)
    }

    /// Counts one answer and records how long it took.
    ///
    /// - Parameters:
    ///   - route: The route's pattern, or `unmatched`.
    ///   - method: The request's method.
    ///   - status: The answer's status code.
    ///   - duration: From the request to the end of the answer's body.
    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        registry.makeCounter(
            descriptor: Self.requestsName, labels: [("route", route), ("method", method), ("status", String(status))]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: Self.requestDurationName, labels: [("route", route)], buckets: Self.durationBuckets
        ).record(duration)
    }

    /// Counts one upstream request.
    ///
    /// - Parameters:
    ///   - kind: `product`, `batch`, `page`, `write` or `direct`.
    ///   - succeeded: Whether it returned what was asked for (a 404 counts as a failure).
    func recordUpstreamRequest(kind: String, succeeded: Bool) {
        registry.makeCounter(
            descriptor: Self.upstreamRequestsName,
            labels: [("kind", kind), ("outcome", succeeded ? "success" : "failure")]
        ).increment()
    }

    /// Counts an `/events` stream opening (`1`) or closing (`-1`).
    ///
    /// - Parameter change: `1` or `-1`.
    func eventStreamsChanged(by change: Int) {
        openEventStreams.increment(by: Double(change))
    }

    /// Counts a cache update that failed after the upstream stored a write.
    func recordCacheUpdateFailure() {
        cacheUpdateFailures.increment()
    }

    /// Every metric in Prometheus' text format, with `trackedKeyCount` as the tracked keys' gauge.
    ///
    /// - Parameter trackedKeyCount: The product keys the store tracks now.
    /// - Returns: The text to answer `GET /metrics` with.
    public func exposition(trackedKeyCount: Int) -> String {
        trackedKeys.set(Int64(trackedKeyCount))
        return registry.emitToString()
    }

    // The descriptors are made where they are used: swift-prometheus does not declare them Sendable, so
    // they cannot be kept in static or stored properties of this Sendable class.

    private static var requestsName: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "catalog", metricName: "http_requests", unitName: "total",
            helpText: "Answers sent, by route pattern, method and status.")
    }

    private static var requestDurationName: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "catalog", metricName: "http_request_duration", unitName: "seconds",
            helpText: "From the request to the end of its answer's body, by route pattern.")
    }

    private static var upstreamRequestsName: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "catalog", metricName: "upstream_requests", unitName: "total",
            helpText: "Requests sent to the upstream, by kind and outcome.")
    }

    private static var openEventStreamsName: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "catalog", metricName: "event_streams", unitName: "open",
            helpText: "Server-sent event streams open now.")
    }

    private static var trackedKeysName: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "catalog", subsystem: "store", metricName: "tracked", unitName: "keys",
            helpText: "Product keys the store's manager tracks (subscribers, callers or a fetch in flight).")
    }

    private static var cacheUpdateFailuresName: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "catalog", metricName: "cache_update_failures", unitName: "total",
            helpText: "Writes stored by the upstream whose cache update failed.")
    }
}
