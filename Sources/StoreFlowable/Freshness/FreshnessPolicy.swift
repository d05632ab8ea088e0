/// How long a cached value is served, and how it is served once stale: the HTTP caching semantics of
/// RFC 9111 and RFC 5861 (`max-age`, `stale-while-revalidate`, `stale-if-error`) for any cache.
///
/// A value's *age* is the time since it was stored, read from an injected ``CacheClock``. On a timeline
/// from the moment a value is stored (`F` = `freshFor`, `R` = the stale-while-revalidate window, `E` = the
/// stale-if-error window, `M` = `maxAge`):
///
/// ```text
/// age: 0 ──────────── F ─────────────── F+R ───────── F+E ───────── M ──────────▶
///      │    fresh     │ stale-while-    │ stale-if-    │   stale    │  expired
///      │  (no fetch)  │ revalidate      │ error        │ (fetch,    │ (never served,
///      │              │ (served, one    │ (fetch; its  │  wait)     │  not even as
///      │              │  fetch behind)  │  failure     │            │  content)
///      │              │                 │  serves it)  │            │
/// ```
///
/// Every window is half-open: a value is fresh while `age < freshFor`, inside the stale-while-revalidate
/// window while `age < freshFor + R`, inside the stale-if-error window while `age < freshFor + E`, and
/// expired once `age >= maxAge` (`maxAge` wins over every other window). The windows overlap; the most
/// usable case applies. The sums never overflow: "forever" is a `nil` duration, and huge durations
/// saturate.
///
/// - A timestamp in the future (the wall clock went backwards) makes the value ``Freshness/stale``:
///   never fresh, and not inside any window, since its age is unknown.
/// - An invalidated value (``CacheEntry/isInvalidated``) is at best ``Freshness/staleIfError``: it is
///   never served without a fetch, but may still stand in for a failing origin within the window.
/// - Reading a value never changes its age.
public struct FreshnessPolicy: Sendable, Hashable, CustomStringConvertible {
    /// How long a value is served with no fetch; `nil` means for ever (a value with no policy never
    /// expires, and is only removed by overflow or explicitly).
    public var freshFor: Duration?
    /// How long after going stale a value is still served at once while one background fetch refreshes
    /// it; `nil` for no such window.
    public var staleWhileRevalidate: Duration?
    /// How long after going stale a value is served in place of a failing fetch's error; `nil` for no
    /// such window.
    public var staleIfError: Duration?
    /// The age past which a value is never served, not even to subscribers as content; `nil` for no
    /// limit.
    public var maxAge: Duration?

    /// Creates a policy.
    ///
    /// Negative durations count as zero.
    ///
    /// - Parameters:
    ///   - freshFor: How long a value is served with no fetch; `nil` for ever.
    ///   - staleWhileRevalidate: The window after `freshFor` in which a stale value is served while one
    ///     background fetch refreshes it.
    ///   - staleIfError: The window after `freshFor` in which a stale value replaces a fetch's error.
    ///   - maxAge: The age at which a value stops being served at all.
    public init(
        freshFor: Duration?, staleWhileRevalidate: Duration? = nil, staleIfError: Duration? = nil,
        maxAge: Duration? = nil
    ) {
        self.freshFor = freshFor.map { max($0, .zero) }
        self.staleWhileRevalidate = staleWhileRevalidate.map { max($0, .zero) }
        self.staleIfError = staleIfError.map { max($0, .zero) }
        self.maxAge = maxAge.map { max($0, .zero) }
    }

    /// Values are fresh for ever: served with no fetch until removed, replaced or invalidated.
    public static let forever = FreshnessPolicy(freshFor: nil)

    /// A stale value is never served: every read fetches (`freshFor` is zero).
    public static let alwaysFetch = FreshnessPolicy(freshFor: .zero)

    /// What a store may do with a value stored at `storedAt`, at `now`.
    ///
    /// - Parameters:
    ///   - storedAt: When the value was stored.
    ///   - now: The current time, from the same clock.
    ///   - isInvalidated: Whether the value was marked stale by an invalidation.
    /// - Returns: The value's freshness.
    public func freshness(storedAt: CacheTime, now: CacheTime, isInvalidated: Bool = false) -> Freshness {
        let age = storedAt.duration(to: now)
        if age < .zero { return .stale }
        if let maxAge, age >= maxAge { return .expired }
        // How long the value has been stale; `nil` while it is younger than `freshFor` (or for ever).
        let staleFor = freshFor.flatMap { age >= $0 ? age - $0 : nil }
        func inside(_ window: Duration?) -> Bool {
            guard let window else { return false }
            return staleFor.map { $0 < window } ?? true
        }
        if !isInvalidated {
            if staleFor == nil { return .fresh }
            if inside(staleWhileRevalidate) { return .staleWhileRevalidate }
        }
        // An invalidated value is never served without a fetch, but may still stand in for a failing
        // origin inside the stale-if-error window.
        return inside(staleIfError) ? .staleIfError : .stale
    }

    /// The freshness of `entry` at `now`.
    ///
    /// - Parameters:
    ///   - entry: A cache entry.
    ///   - now: The current time, from the clock that stamped the entry.
    /// - Returns: The entry's freshness.
    public func freshness<Value>(of entry: CacheEntry<Value>, now: CacheTime) -> Freshness {
        freshness(storedAt: entry.storedAt, now: now, isInvalidated: entry.isInvalidated)
    }

    /// How long a value is worth keeping: past this age it can never be served (not fresh, not inside
    /// any window). `nil` when a value is worth keeping for ever.
    ///
    /// This is `maxAge` when set, else `freshFor` plus the longer window. Caches drop entries older than
    /// this on read (their time to live).
    public var lifetime: Duration? {
        if let maxAge { return maxAge }
        guard let freshFor else { return nil }
        let window = max(staleWhileRevalidate ?? .zero, staleIfError ?? .zero)
        // `Duration` holds 128 bits, so the sum of two non-negative durations built from 64-bit values
        // cannot overflow.
        return freshFor + window
    }

    /// Whether an entry stored at `storedAt` is past ``lifetime`` at `now` (a timestamp in the future
    /// is not: it is stale, and kept as content).
    ///
    /// - Parameters:
    ///   - storedAt: When the entry was stored.
    ///   - now: The current time.
    /// - Returns: `true` when the entry can be dropped.
    public func isPastLifetime(storedAt: CacheTime, now: CacheTime) -> Bool {
        guard let lifetime else { return false }
        return storedAt.duration(to: now) >= lifetime
    }

    /// The policy's windows, for logs.
    public var description: String {
        func show(_ duration: Duration?) -> String { duration.map { "\($0)" } ?? "nil" }
        return "FreshnessPolicy(freshFor: \(show(freshFor)), staleWhileRevalidate: \(show(staleWhileRevalidate)), "
            + "staleIfError: \(show(staleIfError)), maxAge: \(show(maxAge)))"
    }
}
