/// A value read from the cache, with what the store may do with it.
///
/// Returned by ``StoreFlowableCallback/loadCachedData()``.
public struct CachedData<Data> {
    /// The cached value.
    public var value: Data
    /// How the store may serve it.
    public var freshness: Freshness
    /// When the value was stored, by the clock of the cache; set by the caches of a ``KeyedStore``, whose
    /// store works out from it when a stream must stop showing the value (its `maxAge`). Only a copy on
    /// the cache-hit path: the moment is computed when a stream starts.
    @usableFromInline var storedAt: CacheTime?

    /// Creates a read result.
    ///
    /// - Parameters:
    ///   - value: The cached value.
    ///   - freshness: How the store may serve it.
    public init(value: Data, freshness: Freshness) {
        self.value = value
        self.freshness = freshness
        self.storedAt = nil
    }

    /// Creates a read result for a value stored at `storedAt`.
    @usableFromInline
    init(value: Data, freshness: Freshness, storedAt: CacheTime) {
        self.value = value
        self.freshness = freshness
        self.storedAt = storedAt
    }
}

extension CachedData: Sendable where Data: Sendable {}
