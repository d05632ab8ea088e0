extension StoreEvent {
    /// What a ``StoreEvent`` reports.
    public enum Kind: Sendable, CustomStringConvertible {
        /// A read found a value it may serve without waiting for the origin: ``Freshness/fresh``, or
        /// ``Freshness/staleWhileRevalidate`` (then a ``staleServed(_:)`` follows, except for
        /// `validate()`, which serves nothing and waits for its fetch).
        case cacheHit(Freshness)
        /// A read found nothing it may serve at once: no value, an unreadable one (see
        /// ``cacheReadFailed(_:)``), or one that needs a fetch first (`freshness` says how stale it
        /// was; `nil` when nothing usable was cached).
        case cacheMiss(freshness: Freshness?)
        /// Reading the cache threw (a damaged entry, an unreadable file): the read counted as a miss.
        case cacheReadFailed(any Error)
        /// A cache found a damaged entry (a truncated or corrupted file, a value that no longer
        /// decodes), dropped it and answered the read with a miss; `reason` says what was wrong.
        /// Reported by caches that detect damage themselves: a `DiskCache` whose events are forwarded
        /// with `StoreEvent(_:valueType:)` of `StoreFlowableFoundation`. The key is not known then.
        case cacheEntryCorrupt(reason: String)
        /// A caller joined the key's fetch that was already running instead of starting one.
        case joinedFetch
        /// An origin call started; `attempt` counts from 1 (above 1 for a retry).
        case fetchStarted(attempt: Int)
        /// An origin call returned a value after `duration` (by the fetch policy's clock).
        case fetchSucceeded(attempt: Int, duration: Duration)
        /// An origin call threw `error` after `duration`; `willRetry` says whether a retry follows.
        case fetchFailed(attempt: Int, duration: Duration, error: any Error, willRetry: Bool)
        /// The fetch will call the origin again, attempt number `attempt`, after sleeping `delay`.
        case retryScheduled(attempt: Int, delay: Duration)
        /// A stale value was served instead of a fresh one, for `reason`.
        case staleServed(StaleReason)
        /// A batched origin call went out for `size` distinct keys.
        case batchDispatched(size: Int)
        /// The key's cached value was marked stale by `invalidate()`.
        case invalidated
        /// The key was read again from the cache after a change made outside its manager (see
        /// ``StoreFlowable/reloadFromCache()``).
        case reloaded
        /// A reload had to mark the cached value stale (a fetch begun before the change wrote after it)
        /// and the cache threw `error`: until the next write, that value may be served as fresh.
        case staleMarkFailed(any Error)

        /// The kind in one line, for logs.
        public var description: String {
            switch self {
            case .cacheHit(let freshness): "cache hit (\(freshness))"
            case .cacheMiss(let freshness): "cache miss" + (freshness.map { " (\($0))" } ?? "")
            case .cacheReadFailed(let error): "cache read failed: \(error)"
            case .cacheEntryCorrupt(let reason): "cache entry corrupt: \(reason)"
            case .joinedFetch: "joined fetch"
            case .fetchStarted(let attempt): "fetch started (attempt \(attempt))"
            case .fetchSucceeded(let attempt, let duration):
                "fetch succeeded (attempt \(attempt), \(duration.eventDescription))"
            case .fetchFailed(let attempt, let duration, let error, let willRetry):
                "fetch failed (attempt \(attempt), \(duration.eventDescription)\(willRetry ? ", will retry" : "")): \(error)"
            case .retryScheduled(let attempt, let delay):
                "retry scheduled (attempt \(attempt) in \(delay.eventDescription))"
            case .staleServed(let reason): "stale value served (\(reason))"
            case .batchDispatched(let size): "batch dispatched (\(size) keys)"
            case .invalidated: "invalidated"
            case .reloaded: "reloaded from the cache"
            case .staleMarkFailed(let error): "marking the cached value stale failed: \(error)"
            }
        }
    }

    /// Why a stale value was served (see ``Kind/staleServed(_:)``).
    public enum StaleReason: Sendable, CustomStringConvertible {
        /// The value is inside its stale-while-revalidate window: served at once while a background
        /// fetch refreshes it.
        case revalidating
        /// The fetch failed and the value is inside its stale-if-error window: served instead of
        /// `error`.
        case originFailed(any Error)

        /// The reason in a few words, for logs.
        public var description: String {
            switch self {
            case .revalidating: "revalidating"
            case .originFailed(let error): "origin failed: \(error)"
            }
        }
    }
}
