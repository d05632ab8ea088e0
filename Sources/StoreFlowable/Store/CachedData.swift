/// A value read from the cache, with what the store may do with it.
///
/// Returned by ``StoreFlowableCallback/loadCachedData()``.
public struct CachedData<Data> {
    /// The cached value.
    public var value: Data
    /// How the store may serve it.
    public var freshness: Freshness

    /// Creates a read result.
    ///
    /// - Parameters:
    ///   - value: The cached value.
    ///   - freshness: How the store may serve it.
    public init(value: Data, freshness: Freshness) {
        self.value = value
        self.freshness = freshness
    }
}

extension CachedData: Sendable where Data: Sendable {}
