/// The four operations you implement so a store can serve one key: read and write the cache, fetch
/// from the origin, and decide when cached data is stale.
///
/// Create a store with ``create()`` and keep using the store, not the callback. A callback is a value
/// describing one key; creating several callbacks (and stores) for the same key and manager is fine:
/// they share the key's state, subscribers and single fetch.
///
/// When the store calls each operation:
/// - ``loadDataFromCache()``: at the start of every `publish()` stream and every `getData`,
///   `requireData`, and `validate` call; possibly concurrently with itself and with the other operations.
/// - ``needRefresh(cachedData:)``: right after each successful, non-nil cache read above (by the
///   default ``loadCachedData()``, which the store calls for those reads).
/// - ``invalidateCache()``: from `invalidate()`, holding the key's write turn.
/// - ``fetchDataFromOrigin()``: at most once at a time per key and manager, in an unstructured task that
///   the store cancels when nobody waits for the result any more; with a retry policy (see
///   ``fetchPolicy``), several times in a row for one fetch, never twice at once.
/// - ``saveDataToCache(newData:)``: after a successful fetch, and for `update`/`clear`; never twice at
///   once for the same key and manager, and in the order the store decided the writes.
///
/// None of them runs inside the state manager or under a lock: reads run on the caller's task (or the
/// task a `publish()` stream starts), the fetch and its save on the fetch task, and the save of an
/// `update`/`clear` on a task of its own that the caller awaits, so the caller's cancellation cannot
/// make it fail.
public protocol StoreFlowableCallback: Sendable {
    /// The type that identifies one piece of data, such as a user id.
    associatedtype Key: Hashable & Sendable
    /// The type of the data the store serves.
    associatedtype Data: Sendable

    /// The key this callback serves.
    var key: Key { get }

    /// The manager that tracks the state of this key; share one instance between all callbacks of the
    /// same kind of data.
    var flowableDataStateManager: FlowableDataStateManager<Key> { get }

    /// Reads the cached value of ``key``.
    ///
    /// - Returns: The cached value, or `nil` when nothing is cached.
    /// - Throws: Any error. The store treats a throwing read as a cache miss (it fetches and overwrites
    ///   the cache), except in `requireData(from: .cache)`, which throws
    ///   ``StoreFlowableError/cacheReadFailed(underlying:)``.
    func loadDataFromCache() async throws -> Data?

    /// Writes the cached value of ``key``; `nil` deletes it.
    ///
    /// - Parameter newData: The value to store, or `nil` to delete the cached value.
    /// - Throws: Any error. The store then reports ``StoreFlowableError/cacheWriteFailed(underlying:)``
    ///   and keeps the last good value as the state's content.
    func saveDataToCache(newData: Data?) async throws

    /// Fetches the current value of ``key`` from the origin (a server, a database, a file).
    ///
    /// The store runs at most one fetch per key at a time and cancels the task running it when no
    /// caller or subscriber waits any more; check `Task.isCancelled` or use cancellable APIs.
    ///
    /// - Returns: The fresh value, which the store then writes with ``saveDataToCache(newData:)``.
    /// - Throws: Any error; the state becomes `.error(content:rawError:)` with the cached content kept.
    func fetchDataFromOrigin() async throws -> Data

    /// Decides whether a cached value is stale and must be fetched again.
    ///
    /// - Parameter cachedData: The value just read from the cache.
    /// - Returns: `true` when the value must be refreshed before it is served as valid.
    func needRefresh(cachedData: Data) async -> Bool

    /// Reads the cached value of ``key`` with its freshness: whether the store may serve it at once,
    /// serve it while refreshing it in the background, serve it only when the origin fails, or not at
    /// all (see ``Freshness``).
    ///
    /// The default implementation calls ``loadDataFromCache()`` and then ``needRefresh(cachedData:)``:
    /// ``Freshness/fresh`` when no refresh is needed, ``Freshness/stale`` otherwise. Implement it when
    /// your cache keeps timestamps (or use ``KeyedStore``, which does).
    ///
    /// - Returns: The cached value and its freshness, or `nil` when nothing is cached.
    /// - Throws: As ``loadDataFromCache()``.
    func loadCachedData() async throws -> CachedData<Data>?

    /// Marks the cached value of ``key`` as stale without deleting it, so that the next read fetches.
    ///
    /// The store calls it from `invalidate()`, under the key's write turn (no fetch's save or update of
    /// the key runs at the same time). The default implementation does nothing: with it, an
    /// invalidation refetches for the key's current subscribers and waiting callers only, and later
    /// reads trust ``needRefresh(cachedData:)`` as before.
    ///
    /// - Throws: Any error; `invalidate()` then throws it as
    ///   ``StoreFlowableError/cacheWriteFailed(underlying:)``, and still refetches for subscribers.
    func invalidateCache() async throws

    /// How the store calls the origin for this key: retries with backoff, and the concurrency limit it
    /// shares with other stores of the same origin.
    ///
    /// The default implementation returns the manager's ``FlowableDataStateManager/fetchPolicy``;
    /// implement it to give one store its own policy. The store reads it once per fetch.
    var fetchPolicy: FetchPolicy { get }
}

extension StoreFlowableCallback {
    // Always inlined: the cache hit of a callback with only `needRefresh` then costs what it did before
    // this requirement existed (an extra async frame measured about 70 ns more per hit).

    /// Reads the cache with ``loadDataFromCache()`` and decides with ``needRefresh(cachedData:)``.
    ///
    /// - Returns: The cached value, ``Freshness/fresh`` or ``Freshness/stale``; `nil` when nothing is
    ///   cached.
    /// - Throws: What ``loadDataFromCache()`` throws.
    @inlinable @inline(__always)
    public func loadCachedData() async throws -> CachedData<Data>? {
        guard let cached = try await loadDataFromCache() else { return nil }
        return CachedData(value: cached, freshness: await needRefresh(cachedData: cached) ? .stale : .fresh)
    }

    /// Does nothing: the cache keeps no invalidation mark.
    public func invalidateCache() async throws {}

    /// The manager's fetch policy: ``FlowableDataStateManager/fetchPolicy``.
    public var fetchPolicy: FetchPolicy { flowableDataStateManager.fetchPolicy }
}

extension StoreFlowableCallback {
    /// Creates the store that serves this callback's key.
    ///
    /// Creating a store is cheap (it allocates nothing shared); stores created from callbacks with the
    /// same key and manager share one state.
    ///
    /// - Returns: A type-erased store for ``Data``.
    @inlinable
    public func create() -> AnyStoreFlowable<Data> {
        // Inlined into the caller, so that the cache-hit path below is specialised for this callback:
        // a valid cache is then served with no generic or existential dispatch at all.
        let store = CallbackStore(callback: self)
        return AnyStoreFlowable(store, requireData: { from in try await store.requireData(from: from) })
    }
}
