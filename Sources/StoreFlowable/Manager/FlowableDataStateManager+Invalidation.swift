extension FlowableDataStateManager {
    /// Invalidates, in one call, every key this manager tracks that satisfies `isIncluded`, through the
    /// store `makeStore` returns for it (see ``StoreFlowable/invalidate()``).
    ///
    /// A key is tracked while it has subscribers, waiting callers, a fetch or write running, or a
    /// remembered error: every key a fetch may be writing right now is among them. Keys the manager does
    /// not track are not visited: their cached values are marked only if your cache remembers
    /// invalidation itself. A ``KeyedStore`` does that for you: its ``KeyedStore/invalidate(where:)``
    /// also marks every entry of its cache.
    ///
    /// ```swift
    /// try await UserCallback.manager.invalidate(where: { $0 < 100 }) { UserCallback(key: $0).create() }
    /// ```
    ///
    /// - Parameters:
    ///   - isIncluded: Chooses the keys; called outside the actor.
    ///   - makeStore: The store of a key, whose `invalidate()` is called.
    /// - Throws: The first error an invalidation threw; every chosen key is still attempted.
    public nonisolated func invalidate<Store: StoreFlowable>(
        where isIncluded: (Key) -> Bool, storeFor makeStore: (Key) -> Store
    ) async throws {
        let keys = await trackedKeys(of: Store.Data.self).filter(isIncluded)
        try await Self.invalidate(keys, storeFor: makeStore)
    }

    /// Reloads from the cache, in one call, every key this manager tracks that satisfies `isIncluded`,
    /// through the store `makeStore` returns for it (see ``StoreFlowable/reloadFromCache()``).
    ///
    /// Keys the manager does not track need no reload: their next read reads the cache. Call it with
    /// `{ _ in true }` when you learn that the cache changed but not which keys (a notification
    /// channel that dropped and reconnected).
    ///
    /// ```swift
    /// await UserCallback.manager.reloadFromCache(where: { _ in true }) { UserCallback(key: $0).create() }
    /// ```
    ///
    /// - Parameters:
    ///   - isIncluded: Chooses the keys; called outside the actor.
    ///   - makeStore: The store of a key, whose `reloadFromCache()` is called.
    public nonisolated func reloadFromCache<Store: StoreFlowable>(
        where isIncluded: (Key) -> Bool, storeFor makeStore: (Key) -> Store
    ) async {
        for key in await trackedKeys(of: Store.Data.self) where isIncluded(key) {
            await makeStore(key).reloadFromCache()
        }
    }

    /// Invalidates each of `keys` through its store, even when one fails.
    ///
    /// - Throws: The first error an invalidation threw.
    nonisolated static func invalidate<Store: StoreFlowable>(_ keys: [Key], storeFor makeStore: (Key) -> Store)
        async throws
    {
        var firstError: (any Error)?
        for key in keys {
            do {
                try await makeStore(key).invalidate()
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
    }
}
