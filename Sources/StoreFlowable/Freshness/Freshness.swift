/// What a store may do with a cached value, given its age and a ``FreshnessPolicy``.
///
/// The cases are ordered from most to least usable. A store serves ``fresh`` values with no fetch,
/// ``staleWhileRevalidate`` values at once while one background fetch refreshes them, waits for a
/// fetch for the rest, falls back to a ``staleIfError`` value when that fetch fails, and never serves an
/// ``expired`` value, not even as a subscriber's content.
public enum Freshness: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Younger than `freshFor`: served with no fetch.
    case fresh
    /// Inside the stale-while-revalidate window: served at once, while one single-flight background
    /// fetch refreshes it.
    case staleWhileRevalidate
    /// Stale, but inside the stale-if-error window: a fetch is awaited; if it fails, callers get this
    /// value instead of the error.
    case staleIfError
    /// Stale and outside every window (or invalidated, or stamped in the future): a fetch is awaited;
    /// the value is only shown to subscribers as content while it runs or after it fails.
    case stale
    /// Past `maxAge`: never served, not even as content. The store treats it as a cache miss.
    case expired

    /// Whether a caller may get the value without waiting for a fetch.
    public var isServableWithoutFetch: Bool { self <= .staleWhileRevalidate }

    /// Whether a caller may get the value when the fetch that refreshes it fails.
    public var isServableOnError: Bool { self <= .staleIfError }

    /// Whether the value may be shown at all (as data or as a subscriber's content).
    public var isUsable: Bool { self != .expired }

    /// Orders the cases from most to least usable.
    ///
    /// - Returns: `true` when `lhs` is more usable than `rhs`.
    public static func < (lhs: Freshness, rhs: Freshness) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The case's name, as written in Swift.
    public var description: String {
        switch self {
        case .fresh: "fresh"
        case .staleWhileRevalidate: "staleWhileRevalidate"
        case .staleIfError: "staleIfError"
        case .stale: "stale"
        case .expired: "expired"
        }
    }
}
