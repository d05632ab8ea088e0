// The reload path of a callback store: reading the cache again, under the key's write turn, after a
// change made outside the store's manager (see `KeyStateMachine+Reload.swift`).
extension CallbackStore {
    @usableFromInline
    func reloadFromCache() async {
        let permit = WaitPermit.forWrite(of: node)
        if permit.isRefused {
            // Called from inside this key's own cache write (or closing a cycle of waits): the write turn
            // cannot be granted before the caller returns. The reload runs in a task of its own, which the
            // caller does not wait for.
            let store = self
            Task { await store.reload() }
            return
        }
        defer { permit.end() }
        await reload()
    }

    /// Takes the write turn, marks the cached value stale if a fetch wrote after the change, reads the
    /// cache and hands what it found to the key's state machine (a value read after a mark as stale).
    /// Does nothing for a key the manager does not track.
    private func reload() async {
        let writer = OneShot<Bool>()
        guard let (id, mayReadNow, mustMark, effects) = await manager.beginReload(key, writer, Data.self) else {
            return
        }
        effects.run(for: self)
        if !mayReadNow {
            // Reloads are only ever granted; the wait ignores cancellation so the turn is always used and
            // released.
            _ = try? await writer.value(cancellable: false)
        }
        // The mark and the read run in a task of their own so that cancelling the caller cannot leave the
        // turn unused.
        let store = self
        let read: (value: Data, isFresh: Bool, usableUntil: CacheTime?)? = await Task {
            if mustMark {
                // A fetch that began before the change wrote after it: its value must not count as fresh.
                // A failed mark is reported; the read below still decides what subscribers see.
                do {
                    let callback = store.callback
                    try await CallbackScope.run(store.node, .write) { try await callback.invalidateCache() }
                    store.report(.invalidated)
                } catch {
                    store.report(.staleMarkFailed(error))
                }
            }
            // The read holds the write turn, as an update's read does: a call it makes into this key (or
            // into a key that waits for this one) that would wait for the turn is refused instead.
            guard let read = await CallbackScope.run(store.node, .write, { await store.readCache() }) else {
                return nil
            }
            let usableUntil = read.storedAt.flatMap { storedAt in
                store.contentExpiry?.usableUntil(ofValueStoredAt: storedAt)
            }
            // After a mark, what the read finds is never fresh, whatever the mark did: a cache that keeps
            // no mark (the default `invalidateCache()`, a paged store) or a mark that threw leaves the
            // value looking fresh, and it may be older than the change.
            return (read.value, !mustMark && read.freshness == .fresh, usableUntil)
        }.value
        await manager.finishReload(
            key, reload: id, cached: read?.value, isFresh: read?.isFresh ?? false, usableUntil: read?.usableUntil
        ).run(for: self)
        report(.reloaded)
    }
}
