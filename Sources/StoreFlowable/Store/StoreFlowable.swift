/// A store for one key: streams the key's loading state and serves its data from the cache or the
/// origin, with at most one origin fetch in flight per key.
///
/// Create one with ``StoreFlowableCallback/create()``. Every method may be called from any task,
/// any number of times concurrently; the promises they keep are listed in `Docs/ConcurrencyGuarantees.md`.
public protocol StoreFlowable<Data>: Sendable {
    /// The type of the data the store serves.
    associatedtype Data: Sendable

    /// Streams the state of the key: first the current state, then every change.
    ///
    /// The stream first yields the state with the content read from the cache, then validates:
    /// - empty cache: `.loading(content: nil)`, then `.completed` (or `.error`);
    /// - valid cache: exactly one `.completed`, and no fetch;
    /// - stale cache: `.loading(content: stale)`, then `.completed(fresh)` (or `.error(content: stale, …)`);
    /// - a remembered error and a valid cache: `.error(content: cached, rawError:)`, and no fetch.
    ///
    /// The stream conflates: a slow consumer may miss intermediate states but always ends up with the
    /// latest one. It never finishes by itself; it ends when the consuming task is cancelled or leaves
    /// the loop, and its registration is released then.
    ///
    /// - Parameter forceRefresh: When `true`, fetch from the origin even if the cache is valid.
    /// - Returns: A stream of states, one subscription per call.
    func publish(forceRefresh: Bool) -> AsyncStream<LoadingState<Data>>

    /// Returns the data from where `from` says, or `nil` if it cannot.
    ///
    /// Same as ``requireData(from:)`` but returns `nil` instead of throwing.
    ///
    /// - Parameter from: Where the value may come from.
    /// - Returns: The value, or `nil` when ``requireData(from:)`` would throw.
    func getData(from: GettingFrom) async -> Data?

    /// Returns the data from where `from` says, fetching from the origin if needed.
    ///
    /// A valid cached value is returned without contacting the state manager. A fetch joins the one in
    /// flight for the key, if any.
    ///
    /// - Parameter from: Where the value may come from.
    /// - Returns: The value.
    /// - Throws: The origin's error when the fetch fails; ``StoreFlowableError/noValidCache`` or
    ///   ``StoreFlowableError/cacheReadFailed(underlying:)`` for `.cache`;
    ///   ``StoreFlowableError/cacheWriteFailed(underlying:)`` when the fetched value could not be
    ///   cached; `CancellationError` when the calling task is cancelled while waiting (the shared fetch
    ///   goes on for the others).
    func requireData(from: GettingFrom) async throws -> Data

    /// Fetches from the origin if the cache is empty, unreadable or stale, and waits for the result.
    ///
    /// Joins a fetch already in flight. The outcome is reported to subscribers; it returns early when
    /// the calling task is cancelled.
    func validate() async

    /// Fetches from the origin whatever the cache holds, and waits for the result.
    ///
    /// Joins a fetch already in flight. The outcome is reported to subscribers; it returns early when
    /// the calling task is cancelled.
    func refresh() async

    /// Replaces the cached value and tells every subscriber.
    ///
    /// After it returns, the cache and every subscriber hold `newData`, and no fetch that started
    /// before the call can overwrite it. A fetch still calling the origin is cancelled; callers waiting
    /// for it receive `newData`. With `nil`, the cached value is deleted and, if anyone subscribes or
    /// waits, a fetch starts for them. The update completes even if the calling task is cancelled.
    ///
    /// - Parameter newData: The new value, or `nil` to delete the cached value.
    func update(newData: Data?) async

    /// Replaces the cached value with what `transform` makes of it, atomically: no other write of the
    /// key (an update, a fetch's save, a page) runs between the read and the write.
    ///
    /// Reads the cache once it holds the key's write turn, hands the value (`nil` when nothing is
    /// cached) to `transform`, and writes what it returns (`nil` deletes the cached value), with every
    /// promise of ``update(newData:)``. When the read or `transform` throws, nothing is written, the
    /// key's state is unchanged, and a fetch the update dropped starts again for whoever waited for it.
    /// Use it for read-modify-write edits (appending an item to a cached list, toggling a flag) that
    /// "read, then `update`" would race.
    ///
    /// `transform` runs synchronously while the write turn is held: keep it quick and do not call the
    /// store from it.
    ///
    /// - Parameter transform: Makes the new value from the cached one.
    /// - Throws: What `transform` throws; ``StoreFlowableError/cacheReadFailed(underlying:)`` when the
    ///   read throws; ``StoreFlowableError/cacheWriteFailed(underlying:)`` when the write throws (as
    ///   for ``update(newData:)``, subscribers then see `.error`); ``StoreFlowableError/reentrantCall``
    ///   when called from inside the key's own cache write. Cancelling the caller does not stop it.
    func update(_ transform: @escaping @Sendable (Data?) throws -> Data?) async throws

    /// Marks the key's cached value stale without deleting it: the next read fetches, and subscribers
    /// get a refetch now while keeping the value as their content.
    ///
    /// The mark is made through the callback's ``StoreFlowableCallback/invalidateCache()`` (a store built
    /// on a ``KeyedCache`` marks the cache entry), under the key's write turn: no fetch's save or update
    /// of the key runs at the same time. A fetch that began before the call and has not reached the
    /// cache is dropped and started again for whoever waits for it, so no value it brings survives the
    /// invalidation as fresh; a fetch already writing finishes first, and the mark then applies to its
    /// value. After the call returns, subscribers see `.loading(content:)` with the value they had, then
    /// the fetch's outcome. Cancelling the caller does not stop the invalidation.
    ///
    /// - Throws: ``StoreFlowableError/cacheWriteFailed(underlying:)`` when the mark could not be
    ///   written (subscribers are refetched for all the same); ``StoreFlowableError/reentrantCall`` when
    ///   called from inside the key's own cache write.
    func invalidate() async throws

    /// Reads the cached value again and shows it to subscribers, after the cache was changed by
    /// something other than the stores of this key's manager: another process sharing the cache (see
    /// `Docs/ServerCaches.md`), or code writing the cache directly.
    ///
    /// Use it when you learn that the cache changed; the change itself is not repeated and nothing is
    /// written but the mark described below, so calling it on a notification never echoes one. It runs
    /// under the key's write turn, so no fetch's save or update of the key interleaves with it. A key
    /// nobody uses (no subscriber, waiting caller, fetch or write, nor remembered error) is left alone:
    /// its next read reads the cache anyway.
    ///
    /// - A fresh cached value becomes every subscriber's state (`.completed`), answers the callers
    ///   waiting for a fetch and clears the key's error; no fetch runs.
    /// - Anything else (no value, a stale or invalidated one) starts a fetch for the subscribers and
    ///   waiting callers, who see `.loading(content:)` with what the cache holds.
    /// - A fetch that began before the call and has not reached the cache may bring a value older than
    ///   the change: it is dropped, never written, and its callers get the reloaded value or a new
    ///   fetch's. A fetch already writing when the call arrives writes first; since its value may be
    ///   older than the change, the reload then marks it stale (as ``invalidate()`` does) before
    ///   reading, and takes what it reads then as stale whatever the mark did (a cache that keeps no
    ///   mark, as the default ``StoreFlowableCallback/invalidateCache()`` and paged stores, or a mark
    ///   that threw): the subscribers and waiting callers are refetched, so the key is never left fresh
    ///   with it.
    ///
    /// Cancelling the caller does not stop the reload. Its cache read holds the key's write turn, like
    /// an update's read: a call the read makes into the store that would wait for that turn is refused
    /// or deferred as from inside a cache write. From inside the key's own cache write (the reload's
    /// read included), where the write turn cannot be granted before the callback returns, the reload
    /// runs in a task of its own and the call returns at once.
    func reloadFromCache() async

    /// Deletes the cached value and forgets the key's error; subscribers stay attached.
    ///
    /// Equivalent to `update(newData: nil)`: existing `publish()` streams see `.loading(content: nil)`
    /// and then the result of the fetch that starts for them.
    func clear() async

    /// The key's current state in the state manager.
    ///
    /// - Returns: `.loading` while a fetch is in flight, `.error` after an unresolved failure, otherwise
    ///   `.fixed`.
    func dataState() async -> DataState
}

extension StoreFlowable {
    /// Does nothing: the default for stores you write yourself (test doubles, adapters), which have no
    /// cache shared with anyone else to read again. Every store of this library (built from a callback,
    /// a ``KeyedStore``, or wrapped in ``AnyStoreFlowable``) implements it as described at the
    /// requirement.
    public func reloadFromCache() async {}

    /// Streams the state of the key without forcing a refresh; see ``publish(forceRefresh:)``.
    ///
    /// - Returns: A stream of states, one subscription per call.
    public func publish() -> AsyncStream<LoadingState<Data>> {
        publish(forceRefresh: false)
    }

    /// Returns the valid cached value or fetches it; see ``getData(from:)``.
    ///
    /// - Returns: The value, or `nil` when neither a valid cache nor a successful fetch provides one.
    @inlinable
    public func getData() async -> Data? {
        await getData(from: .both)
    }

    /// Returns the valid cached value or fetches it; see ``requireData(from:)``.
    ///
    /// - Returns: The value.
    /// - Throws: The errors listed at ``requireData(from:)``.
    @inlinable
    public func requireData() async throws -> Data {
        try await requireData(from: .both)
    }
}
