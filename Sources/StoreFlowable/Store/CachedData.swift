/// A value read from the cache, with what the store may do with it.
///
/// Returned by ``StoreFlowableCallback/loadCachedData()``.
public struct CachedData<Data> {
    /// The cached value.
    public var value: Data
    /// How the store may serve it.
    public var freshness: Freshness
    /// When the value stops being usable (its `maxAge` passes), by the clock of the cache; set by the
    /// caches of a ``KeyedStore`` so that a stream stops showing the value once it has expired.
    @usableFromInline var usableUntil: CacheTime?

    /// Creates a read result.
    ///
    /// - Parameters:
    ///   - value: The cached value.
    ///   - freshness: How the store may serve it.
    public init(value: Data, freshness: Freshness) {
        self.value = value
        self.freshness = freshness
        self.usableUntil = nil
    }

    /// Creates a read result whose value stops being usable at `usableUntil`.
    @usableFromInline
    init(value: Data, freshness: Freshness, usableUntil: CacheTime?) {
        self.value = value
        self.freshness = freshness
        self.usableUntil = usableUntil
    }
}

extension CachedData: Sendable where Data: Sendable {}
