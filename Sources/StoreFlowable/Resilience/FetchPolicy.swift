/// How a store calls the origin: its ``RetryPolicy``, the ``ConcurrencyLimit`` it shares with other
/// stores of the same origin, and the clock its backoff sleeps on.
///
/// Give one to a manager (``FlowableDataStateManager/init(rememberedErrorLimit:fetchPolicy:observer:)``)
/// for all its stores, or return one from a callback's ``StoreFlowableCallback/fetchPolicy`` for one
/// store. The policy applies to every origin call of a store: fetches, and page fetches of a paged
/// store.
public struct FetchPolicy: Sendable {
    /// How failed origin calls are retried; ``RetryPolicy/never`` by default.
    public var retry: RetryPolicy
    /// The limit on origin calls running at once, shared with every store given the same limit;
    /// `nil` (the default) for no limit. An origin call holds its permit while it runs: a store whose
    /// origin reads another store needs a different limit from that store's (see ``ConcurrencyLimit``).
    public var concurrencyLimit: ConcurrencyLimit?
    /// The clock the backoff sleeps on, and that measures the durations of fetch events.
    public var clock: any Clock<Duration>

    /// Creates a fetch policy.
    ///
    /// - Parameters:
    ///   - retry: How failed origin calls are retried; none by default.
    ///   - concurrencyLimit: The limit shared with other stores of the same origin; none by default.
    ///   - clock: The clock for backoff sleeps and fetch durations; a `ContinuousClock` by default.
    public init(
        retry: RetryPolicy = .never, concurrencyLimit: ConcurrencyLimit? = nil,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.retry = retry
        self.concurrencyLimit = concurrencyLimit
        self.clock = clock
    }
}
