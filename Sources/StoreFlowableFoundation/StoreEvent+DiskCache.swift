public import StoreFlowable

extension StoreEvent {
    /// The store event a ``DiskCacheEvent`` stands for, so that a disk cache's damaged files reach the
    /// same observer as the store's events: ``DiskCacheEvent/removedDamagedFile(path:problem:)`` becomes
    /// `StoreEvent.Kind.cacheEntryCorrupt(reason:)`; every other disk cache event (expiry, eviction,
    /// cleanup) has no store event, and gives `nil`.
    ///
    /// ```swift
    /// let observer = StoreEventRecorder()
    /// let cache = try DiskCache<Int, User>(name: "users", events: { event in
    ///     if let event = StoreEvent(event, valueType: User.self) { observer.observe(event) }
    /// })
    /// ```
    ///
    /// The event has no key: the cache knows only the damaged file, not which key it held.
    ///
    /// - Parameters:
    ///   - event: What the disk cache reported.
    ///   - valueType: The cache's value type, reported as the event's data type.
    public init?(_ event: DiskCacheEvent, valueType: any Any.Type) {
        guard case .removedDamagedFile(let path, let problem) = event else { return nil }
        self.init(.cacheEntryCorrupt(reason: "\(problem) (\(path))"), key: nil, dataType: valueType)
    }
}
