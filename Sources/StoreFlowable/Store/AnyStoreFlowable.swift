/// A type-erased ``StoreFlowable``: what ``StoreFlowableCallback/create()`` returns.
///
/// It is a small `Sendable` value; copy it freely and share it between tasks. All copies, and all
/// stores created for the same key and manager, share one state.
public struct AnyStoreFlowable<Data: Sendable>: StoreFlowable {
    @usableFromInline let base: any StoreFlowable<Data>
    /// `requireData(from:)` of a store from ``StoreFlowableCallback/create()``, specialised for its
    /// callback where it was created; `nil` for other stores, which are called through `base`.
    @usableFromInline let specializedRequireData: (@Sendable (GettingFrom) async throws -> Data)?

    /// Wraps `base`, forwarding every call to it.
    ///
    /// - Parameter base: The store to wrap.
    public init(_ base: some StoreFlowable<Data>) {
        if let erased = base as? AnyStoreFlowable<Data> {
            self = erased
        } else {
            self.base = base
            specializedRequireData = nil
        }
    }

    /// Wraps a callback's store with its `requireData(from:)` specialised for the callback.
    ///
    /// - Parameters:
    ///   - base: The store to wrap.
    ///   - requireData: `base.requireData(from:)`, compiled where the callback's type is known.
    @usableFromInline
    init(_ base: some StoreFlowable<Data>, requireData: @escaping @Sendable (GettingFrom) async throws -> Data) {
        self.base = base
        specializedRequireData = requireData
    }

    /// See ``StoreFlowable/publish(forceRefresh:)``.
    ///
    /// - Parameter forceRefresh: When `true`, fetch from the origin even if the cache is valid.
    /// - Returns: A stream of states, one subscription per call.
    public func publish(forceRefresh: Bool = false) -> AsyncStream<LoadingState<Data>> {
        base.publish(forceRefresh: forceRefresh)
    }

    /// See ``StoreFlowable/getData(from:)``.
    ///
    /// - Parameter from: Where the value may come from.
    /// - Returns: The value, or `nil` when ``requireData(from:)`` would throw.
    @inlinable
    public func getData(from: GettingFrom = .both) async -> Data? {
        if let specializedRequireData { return try? await specializedRequireData(from) }
        return await base.getData(from: from)
    }

    /// See ``StoreFlowable/requireData(from:)``.
    ///
    /// - Parameter from: Where the value may come from.
    /// - Returns: The value.
    /// - Throws: The errors listed at ``StoreFlowable/requireData(from:)``.
    @inlinable
    public func requireData(from: GettingFrom = .both) async throws -> Data {
        if let specializedRequireData { return try await specializedRequireData(from) }
        return try await base.requireData(from: from)
    }

    /// See ``StoreFlowable/validate()``.
    public func validate() async {
        await base.validate()
    }

    /// See ``StoreFlowable/refresh()``.
    public func refresh() async {
        await base.refresh()
    }

    /// See ``StoreFlowable/update(newData:)``.
    ///
    /// - Parameter newData: The new value, or `nil` to delete the cached value.
    public func update(newData: Data?) async {
        await base.update(newData: newData)
    }

    /// See ``StoreFlowable/update(_:)``.
    ///
    /// - Parameter transform: Makes the new value from the cached one.
    /// - Throws: The errors listed at ``StoreFlowable/update(_:)``.
    public func update(_ transform: @escaping @Sendable (Data?) throws -> Data?) async throws {
        try await base.update(transform)
    }

    /// See ``StoreFlowable/invalidate()``.
    ///
    /// - Throws: The errors listed at ``StoreFlowable/invalidate()``.
    public func invalidate() async throws {
        try await base.invalidate()
    }

    /// See ``StoreFlowable/reloadFromCache()``.
    public func reloadFromCache() async {
        await base.reloadFromCache()
    }

    /// See ``StoreFlowable/clear()``.
    public func clear() async {
        await base.clear()
    }

    /// See ``StoreFlowable/dataState()``.
    ///
    /// - Returns: The key's current state.
    public func dataState() async -> DataState {
        await base.dataState()
    }
}
