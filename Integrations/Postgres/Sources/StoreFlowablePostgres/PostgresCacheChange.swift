/// What another cache object changed in a ``PostgresCache``'s table, as delivered by
/// ``PostgresCache/listenForChanges(retry:clock:onChange:)``: reload these keys from the cache.
///
/// A change means "this may differ from what you last read": a write, a removal or an invalidation
/// that committed. It never carries the value; read it from the cache (its newest committed row) when
/// you need it.
///
/// ```swift
/// switch change {
/// case .key(let key, _): reload([key])
/// case .keyHash(let hash, _): reload(tracked.filter { (try? users.keyHash(forKey: $0)) == hash })
/// case .all: reload(tracked)
/// }
/// ```
public enum PostgresCacheChange<Key: Hashable & Sendable>: Sendable, Hashable {
    /// The entry of `key` was written, removed or invalidated. `version` is the `seq` of the row the
    /// change stored, marked or deleted: it names that row's version (an invalidation keeps the row's
    /// number), not an order between changes, so handle every change you receive.
    case key(Key, version: Int64)
    /// The entry of a key whose encoded bytes are too long for a notification (over about 5 KB) was
    /// written, removed or invalidated: the change carries the 64-bit FNV-1a hash of those bytes, which
    /// ``PostgresCache/keyHash(forKey:)`` computes for a key you track. Another key with the same hash
    /// is reloaded needlessly, which is harmless. `version` as for ``key(_:version:)``.
    case keyHash(UInt64, version: Int64)
    /// Any entry may have changed: every key was removed, more than 100 keys were invalidated at once,
    /// or the listener has just started listening or reconnected (changes before that were not
    /// received).
    case all
}
