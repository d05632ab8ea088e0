/// Where `getData(from:)` and `requireData(from:)` may take their value from.
///
/// Every case keeps the store's single-flight promise: a read that needs the origin joins the fetch
/// already in flight for the key, if there is one, instead of starting a second one.
public enum GettingFrom: Sendable, Hashable, CaseIterable {
    /// Return the cached value if it is present and `needRefresh(cachedData:)` says it is still valid;
    /// otherwise fetch from the origin (joining a fetch already in flight) and return its result.
    case both
    /// Always return a value fetched from the origin, joining a fetch already in flight if there is one.
    case origin
    /// Never contact the origin: return the cached value only if it is present and still valid.
    case cache
}
