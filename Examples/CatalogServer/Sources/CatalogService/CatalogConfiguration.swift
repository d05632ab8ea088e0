import CatalogModel
public import Foundation
public import StoreFlowable

/// Everything the catalogue service is told: where it listens, where the upstream is, how long products
/// are served from the cache, how the upstream is called, and the clocks.
///
/// The defaults are those of `catalog-server` without options, except ``upstreamURL``, which has none.
/// Tests inject ``cacheClock``, ``retryClock`` and ``batchClock`` (`ManualCacheClock` and `ManualClock`
/// from `StoreFlowableTesting`) to cross freshness windows and backoffs without sleeping.
public struct CatalogConfiguration: Sendable {
    /// The address to listen on.
    public var host = "127.0.0.1"
    /// The port to listen on; 0 lets the system pick one (the service reports it once listening).
    public var port = 8080
    /// The upstream's base URL, such as `http://127.0.0.1:9000` (no trailing path).
    public var upstreamURL: URL
    /// How long a cached product is served: fresh for 5 seconds, then served at once while one fetch
    /// refreshes it for 30 more, and in place of a failing upstream for 300 seconds after `freshFor`.
    ///
    /// The pages of the product list (``CatalogRepository/page(after:)``) use its `freshFor` only: the
    /// library's paged stores know fresh and stale, not the windows.
    public var freshness = FreshnessPolicy(
        freshFor: .seconds(5), staleWhileRevalidate: .seconds(30), staleIfError: .seconds(300))
    /// How a failed upstream call is retried: 3 attempts at most, 50 ms then 100 ms apart, capped at
    /// 1 second, honouring `Retry-After` up to that cap, and no retry starting later than 3 seconds
    /// after the fetch began.
    ///
    /// No jitter by default: the keys of a failed batch then retry together and go out as one batch
    /// again, instead of scattering into many small ones. Every instance's retries are still spread by
    /// when its own requests arrived.
    ///
    /// The time bound (`maxElapsed`) keeps a slow upstream from holding a request for three timeouts in
    /// a row: with the default timeout and queue, a fetch ends within about 3 s plus one attempt (at
    /// most 2 s waiting in line and 2 s of request), so within a client's 10 s.
    public var retry = RetryPolicy(
        maxAttempts: 3, baseDelay: .milliseconds(50), maxDelay: .seconds(1), jitter: .none, maxElapsed: .seconds(3))
    /// The deadline of one upstream request, from sending it to the end of its body.
    public var upstreamTimeout: Duration = .seconds(2)
    /// The most upstream requests of the stores in flight at once (batches, pages and writes together);
    /// the others wait in line, in arrival order.
    public var upstreamConcurrency = 32
    /// The most upstream requests that wait in that line at once; a request beyond it is not sent and
    /// its callers get a 503 at once (or the stale value, inside the stale-if-error window), so a slow
    /// upstream never piles requests up in the service. With 32 running and 32 waiting, a request waits
    /// at most for one round of requests ahead of it: one timeout.
    public var upstreamQueueLimit = 32
    /// How long a batch of product misses collects ids before it goes to the upstream.
    public var batchWindow: Duration = .milliseconds(2)
    /// The most ids in one batch request: the upstream's limit, 100.
    public var batchSize = ProductBatch.maximumCount
    /// How many products the memory tier in front of the SQLite file keeps (the least recently used go
    /// first); not used with PostgreSQL, whose instances must all read the shared table.
    public var memoryCacheCount = 20_000
    /// How many products one page of `GET /products?cursor=` holds.
    public var pageSize = ProductPage.defaultLimit
    /// How many product ids one cached section of the product list spans (see ``ProductListCallback``).
    public var listSectionLength = 100
    /// The start of the cache tables' names: `<name>_products` and `<name>_pages`.
    public var cacheName = "catalog"
    /// How long an idle `/events` stream waits before it sends a comment line, so that proxies keep it
    /// open and a client that vanished without closing is noticed (within ``deadPeerTimeout`` of the
    /// heartbeat, which it leaves unacknowledged).
    public var eventHeartbeat: Duration = .seconds(15)
    /// How long a client that vanished without closing its connection (a cut cable, a host switched off:
    /// no FIN, no RST) keeps it, with its `/events` stream and store subscription: data the service sent
    /// and the client left unacknowledged for this long, or this long of silence unanswered to keepalive
    /// probes, drops the connection (`TCP_USER_TIMEOUT` and `SO_KEEPALIVE` on each accepted socket; see
    /// `DeadPeerTimeoutChannel`). Whole seconds, at least 1 and at most about 24 days (what
    /// `TCP_USER_TIMEOUT` holds; a longer timeout is taken as that, and the keepalive's idle time and
    /// interval are capped at Linux's 32,767 seconds). Without it the kernel would give up only
    /// after about 15 minutes of retransmissions, and never on an idle connection.
    ///
    /// A client that reads nothing while data waits for it for this long is dropped too (Linux 5.11 and
    /// later): 30 seconds of not reading an `/events` stream is a client gone.
    public var deadPeerTimeout: Duration = .seconds(30)
    /// How long an instance's claim on a key holds in the PostgreSQL single flight: the longest a key
    /// waits for an instance that died while fetching it.
    public var singleFlightLease: Duration = .seconds(10)
    /// The time source of the caches' freshness (the wall clock by default).
    public var cacheClock: any CacheClock = SystemCacheClock()
    /// The clock of the retries' backoff sleeps and of fetch durations.
    public var retryClock: any Clock<Duration> = ContinuousClock()
    /// The clock a batch's window sleeps on.
    public var batchClock: any Clock<Duration> = ContinuousClock()

    /// Makes a configuration with the defaults above.
    ///
    /// - Parameter upstreamURL: The upstream's base URL.
    public init(upstreamURL: URL) {
        self.upstreamURL = upstreamURL
    }
}
