/// A cached value with what freshness needs: when it was stored, and whether it was invalidated since.
///
/// Caches store the timestamp with the value and return it unchanged: reading an entry never makes it
/// younger. A tiered cache copying an entry from a slow tier to a fast one keeps its timestamp.
public struct CacheEntry<Value> {
    /// The cached value.
    public var value: Value
    /// When the value was stored, from the writer's ``CacheClock``.
    public var storedAt: CacheTime
    /// Whether the value was marked stale by an invalidation since it was stored. A store fetches before
    /// serving it (see ``FreshnessPolicy``), and the next write replaces the mark.
    public var isInvalidated: Bool

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - storedAt: When it was stored.
    ///   - isInvalidated: Whether it is already marked stale.
    public init(value: Value, storedAt: CacheTime, isInvalidated: Bool = false) {
        self.value = value
        self.storedAt = storedAt
        self.isInvalidated = isInvalidated
    }

    /// This entry, marked stale.
    public var invalidated: CacheEntry {
        var entry = self
        entry.isInvalidated = true
        return entry
    }
}

extension CacheEntry: Sendable where Value: Sendable {}
extension CacheEntry: Equatable where Value: Equatable {}
extension CacheEntry: Hashable where Value: Hashable {}
