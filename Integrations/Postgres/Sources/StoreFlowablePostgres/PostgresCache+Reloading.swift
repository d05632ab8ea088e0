public import StoreFlowable

extension PostgresCache {
    /// Keeps `stores` current with what other instances write to this cache: listens for the cache's
    /// changes (``listenForChanges(retry:clock:onChange:)``) and reloads each changed key in `stores`
    /// (``KeyedStore/reloadFromCache(forKey:)``), until the calling task is cancelled.
    ///
    /// ```swift
    /// let stores = KeyedStore(cache: users) { id in try await api.user(id) }
    /// group.addTask { await users.listenForChanges(reloading: stores) }
    /// ```
    ///
    /// Run it once per cache object, for as long as the instance serves, next to the client's `run()`.
    /// `stores` must be built on this cache object: its own writes are then skipped (the stores of this
    /// instance already know them), and every other instance's save, update, clear and invalidation
    /// reaches this instance's subscribers:
    /// - a key written elsewhere is read again: a fresh value becomes its subscribers' state with no
    ///   origin call, and a fetch that began before the change never writes (see
    ///   ``StoreFlowable/reloadFromCache()``, which also describes a fetch already writing);
    /// - a key known only by its hash (a key too long for a notification) reloads every tracked key with
    ///   that hash;
    /// - after the listener (re)connects, every key the stores track is reloaded, since notifications
    ///   sent while nobody listened are lost.
    ///
    /// Keys nobody uses in this instance cost nothing: their next read reads the cache anyway. Changes
    /// are handled one at a time, in commit order; reloading every tracked key reads each in turn.
    ///
    /// - Parameters:
    ///   - stores: The stores over this cache object whose keys to keep current.
    ///   - retry: The backoff between reconnections (see ``listenForChanges(retry:clock:onChange:)``).
    ///   - clock: The clock of the backoff and of the connect timeout.
    public func listenForChanges(
        reloading stores: KeyedStore<PostgresCache<Key, Value>>,
        retry: PostgresCacheListenerRetry = .default,
        clock: some Clock<Duration> = ContinuousClock()
    ) async {
        await listenForChanges(retry: retry, clock: clock) { [self] change in
            await reload(change, in: stores)
        }
    }

    /// Brings one change of another cache object to `stores`: what
    /// ``listenForChanges(reloading:retry:clock:)`` does with each change it hears, callable on its own
    /// (the tests hand it a change at a moment they choose).
    ///
    /// - Parameters:
    ///   - change: The change.
    ///   - stores: The stores over this cache object.
    func reload(_ change: PostgresCacheChange<Key>, in stores: KeyedStore<PostgresCache<Key, Value>>) async {
        switch change {
        case .key(let key, _):
            await stores.reloadFromCache(forKey: key)
        case .keyHash(let hash, _):
            await stores.reloadFromCache(where: { key in (try? keyHash(forKey: key)) == hash })
        case .all:
            await stores.reloadFromCache(where: { _ in true })
        }
    }
}
