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
    ///   sent while nobody listened are lost;
    /// - a value this instance wrote after the change yet fetched before hearing of it (the origin still
    ///   had the older value when the fetch began) is marked stale, here and elsewhere (see below, with
    ///   what is not checked).
    ///
    /// **A write that committed after a change it had not heard.** Instance B fetches a key and gets
    /// the origin's old value; meanwhile A updates the key (the origin and the table now hold the new
    /// value); B's fetch then writes the old value, committing after A's write, and B hears A's change
    /// only after that. The reload cannot tell: B reads its own old value, fresh, and A, hearing B's
    /// write, reads it too. So this object remembers, for each key, the `seq` of its own latest write
    /// that changed the row, and after reloading a key whose change carries a lower `version`, it marks
    /// the key stale through `stores` (``StoreFlowable/invalidate()``): this instance's subscribers
    /// refetch, and the mark's notification makes every other instance reload the key as stale and
    /// refetch, instead of serving the older value as fresh. A row's `seq` grows in the order its
    /// writes commit, so a lower `version` means that this object's write committed after the change.
    /// - The check follows the reload: a write that had finished when the reload began is remembered by
    ///   then, and one still under way is marked by the reload itself
    ///   (``StoreFlowable/reloadFromCache()``; the second mark then costs one more fetch).
    /// - When the write was in fact newer than the change (an update of this instance), the mark costs
    ///   one origin fetch, which brings the update back from the origin (an update that the origin does
    ///   not hold is replaced by the origin's value).
    /// - A mark's change carries the `seq` of the row it marked, which no write committed before it
    ///   exceeds: a mark never makes another instance mark in return. Writes that only refreshed a row
    ///   already holding their value are not remembered, so instances that refetch one value after a
    ///   mark do not mark it in turn.
    /// - A key known by its hash marks each key of this object's remembered writes with that hash.
    /// - Not checked: ``PostgresCacheChange/all``, which carries no version (a change lost while the
    ///   listener was disconnected, ``removeAllEntries()``, ``invalidateEntries(where:)`` of more than
    ///   100 keys); a write made before the listener started, one whose answer was lost (a timeout
    ///   after it committed), and one by another manager's stores or straight through the cache that is
    ///   still under way when the reload ends; a write that inserted the key's row (there was none) just
    ///   after another instance's row of the key was deleted, while its statement ran (it may carry a
    ///   number drawn before that row's); a write forgotten because this object made 4,096 other writes
    ///   since. Each instance checks only its own writes: the one that wrote last must run this listener.
    /// - A mark that fails is reported as ``PostgresCacheEvent/staleMarkFailed(key:error:)``.
    ///
    /// The record costs nothing until this listener starts: then one lock per write that changed a row
    /// and per change heard, and at most 4,096 keys in memory.
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
        ownWrites.startTracking()
        await listenForChanges(retry: retry, clock: clock) { [self] change in
            await reload(change, in: stores)
        }
    }

    /// Brings one change of another cache object to `stores`: what
    /// ``listenForChanges(reloading:retry:clock:)`` does with each change it hears, callable on its own
    /// (the tests hand it a change at a moment they choose).
    ///
    /// Reloads the changed keys, then marks stale each of them that this object wrote after the change
    /// (see ``PostgresOwnWrites``).
    ///
    /// - Parameters:
    ///   - change: The change.
    ///   - stores: The stores over this cache object.
    func reload(_ change: PostgresCacheChange<Key>, in stores: KeyedStore<PostgresCache<Key, Value>>) async {
        switch change {
        case .key(let key, let version):
            await stores.reloadFromCache(forKey: key)
            // After the reload: a write that ended before it began is recorded by now (one under way was
            // waited for, and marked, by the reload).
            guard ownWrites.isTracking, let keyBytes = try? encodedKey(key) else { return }
            if ownWrites.takeWrite(of: keyBytes, newerThan: version) { await markStale(key, in: stores) }
        case .keyHash(let hash, let version):
            await stores.reloadFromCache(where: { key in (try? keyHash(forKey: key)) == hash })
            for keyBytes in ownWrites.takeWrites(withHash: hash, newerThan: version) {
                // A coder that cannot decode a key it encoded leaves that write unmarked.
                guard let key = try? coder.decodeKey(from: keyBytes) else { continue }
                await markStale(key, in: stores)
            }
        case .all:
            await stores.reloadFromCache(where: { _ in true })
        }
    }

    /// Marks `key` stale through `stores` (``StoreFlowable/invalidate()``): this object wrote it after
    /// another object's change that its listener had not heard, so the value may be older than the
    /// change. Reports a failure as ``PostgresCacheEvent/staleMarkFailed(key:error:)``.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - stores: The stores over this cache object.
    private func markStale(_ key: Key, in stores: KeyedStore<PostgresCache<Key, Value>>) async {
        do {
            try await stores[key].invalidate()
        } catch {
            let printable = (try? encodedKey(key)).map(Self.printable) ?? String(describing: key)
            report(.staleMarkFailed(key: printable, error: String(describing: error)))
        }
    }
}
