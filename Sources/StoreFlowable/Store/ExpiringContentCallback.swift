/// A callback whose values stop being usable at a moment the store can know: the callback of a
/// ``KeyedStore`` over a cache whose policy has a `maxAge`.
///
/// The store stamps the content a `publish()` stream shows with that moment (from the `storedAt` of the
/// stream's first cache read, or computed just before a fetched or updated value is written) and
/// delivers a later `.loading` or `.error` state without the content once the moment has passed. No
/// cache read is involved, so a slow or hanging cache never holds up a failed fetch's state.
protocol ExpiringContentCallback: StoreFlowableCallback {
    /// The `maxAge` and clock of the callback's cache; `nil` when its values never expire.
    var contentExpiry: ContentExpiry? { get }
}
