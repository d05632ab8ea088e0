public import StoreFlowable

/// A ready-made paginated callback (one-way and two-way) that reads and writes an ``InMemoryCache`` of
/// paged records and fetches each kind of page from its own ``ScriptedOrigin``.
///
/// ```swift
/// let callback = TestPaginationCallback<String, [Int], Int>(key: "feed", manager: FlowableDataStateManager())
/// callback.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 2))
/// callback.nextOrigin.enqueue(value: FetchedPage(data: [3, 4], cursor: nil))
/// let store = callback.create()
/// _ = try await store.requireData()
/// await store.requestNextData()
/// #expect(callback.cache.value?.data == [1, 2, 3, 4])
/// ```
///
/// Each operation forwards to one double and adds nothing; the cursors the store passes are recorded
/// in ``requestedNextCursors`` and ``requestedPrevCursors``. Pages are merged with the default
/// `RangeReplaceableCollection` merges (append after, prepend before). `create()` returns a two-way
/// store; `OneWayPaginationCallback(callback).create()` makes a one-way store over the same doubles.
public struct TestPaginationCallback<
    Key: Hashable & Sendable, Value: RangeReplaceableCollection & Sendable, Cursor: Sendable
>: TwoWayPaginationStoreFlowableCallback {
    /// The type of the loaded pages merged into one value.
    public typealias Data = Value

    /// The key this callback serves.
    public let key: Key

    /// The manager that tracks the state of the key.
    public let flowableDataStateManager: FlowableDataStateManager<Key>

    /// The cache of paged records the callback reads and writes.
    public let cache: InMemoryCache<PagedData<Value, Cursor>>

    /// The origin of first pages.
    public let origin: ScriptedOrigin<PagedData<Value, Cursor>>

    /// The origin of next pages.
    public let nextOrigin: ScriptedOrigin<FetchedPage<Value, Cursor>>

    /// The origin of previous pages.
    public let prevOrigin: ScriptedOrigin<FetchedPage<Value, Cursor>>

    private let requests = CursorLog<Cursor>()
    private let isStale: @Sendable (Value) -> Bool

    /// Creates a callback over its doubles.
    ///
    /// - Parameters:
    ///   - key: The key the callback serves.
    ///   - manager: The state manager to share with every other callback of the same kind of data.
    ///   - cache: The cache to read and write; empty by default.
    ///   - origin: The origin of first pages; by default one with nothing scripted.
    ///   - nextOrigin: The origin of next pages; by default one with nothing scripted.
    ///   - prevOrigin: The origin of previous pages; by default one with nothing scripted.
    ///   - needRefresh: Returns `true` for cached data that must be fetched again; by default cached
    ///     data is always valid.
    public init(
        key: Key,
        manager: FlowableDataStateManager<Key>,
        cache: InMemoryCache<PagedData<Value, Cursor>> = InMemoryCache(),
        origin: ScriptedOrigin<PagedData<Value, Cursor>> = ScriptedOrigin(),
        nextOrigin: ScriptedOrigin<FetchedPage<Value, Cursor>> = ScriptedOrigin(),
        prevOrigin: ScriptedOrigin<FetchedPage<Value, Cursor>> = ScriptedOrigin(),
        needRefresh: @escaping @Sendable (Value) -> Bool = { _ in false }
    ) {
        self.key = key
        flowableDataStateManager = manager
        self.cache = cache
        self.origin = origin
        self.nextOrigin = nextOrigin
        self.prevOrigin = prevOrigin
        isStale = needRefresh
    }

    /// The cursors the store fetched next pages with, oldest first.
    public var requestedNextCursors: [Cursor] { requests.next }

    /// The cursors the store fetched previous pages with, oldest first.
    public var requestedPrevCursors: [Cursor] { requests.prev }

    /// Reads ``cache``.
    ///
    /// - Returns: The cached record, or `nil` when the cache is empty.
    /// - Throws: The failure set with ``InMemoryCache/failReads(with:)``.
    public func loadDataFromCache() async throws -> PagedData<Value, Cursor>? {
        try await cache.load()
    }

    /// Writes ``cache``.
    ///
    /// - Parameter newData: The record to store, or `nil` to empty the cache.
    /// - Throws: The failure set with ``InMemoryCache/failWrites(with:)``.
    public func saveDataToCache(newData: PagedData<Value, Cursor>?) async throws {
        try await cache.save(newData)
    }

    /// Fetches a first page from ``origin``.
    ///
    /// - Returns: The next scripted first page.
    /// - Throws: The next scripted error, or the errors listed at ``ScriptedOrigin/fetch()``.
    public func fetchDataFromOrigin() async throws -> PagedData<Value, Cursor> {
        try await origin.fetch()
    }

    /// Records `nextCursor` and fetches a page from ``nextOrigin``.
    ///
    /// - Parameters:
    ///   - nextCursor: The cursor the store asks for.
    ///   - data: The cached data (unused).
    /// - Returns: The next scripted next page.
    /// - Throws: The next scripted error, or the errors listed at ``ScriptedOrigin/fetch()``.
    public func fetchNextDataFromOrigin(nextCursor: Cursor, data: Value) async throws -> FetchedPage<Value, Cursor> {
        requests.record(next: nextCursor)
        return try await nextOrigin.fetch()
    }

    /// Records `prevCursor` and fetches a page from ``prevOrigin``.
    ///
    /// - Parameters:
    ///   - prevCursor: The cursor the store asks for.
    ///   - data: The cached data (unused).
    /// - Returns: The next scripted previous page.
    /// - Throws: The next scripted error, or the errors listed at ``ScriptedOrigin/fetch()``.
    public func fetchPrevDataFromOrigin(prevCursor: Cursor, data: Value) async throws -> FetchedPage<Value, Cursor> {
        requests.record(prev: prevCursor)
        return try await prevOrigin.fetch()
    }

    /// Asks the `needRefresh` closure given at creation.
    ///
    /// - Parameter cachedData: The data just read from the cache.
    /// - Returns: `true` when the data must be fetched again.
    public func needRefresh(cachedData: Value) async -> Bool {
        isStale(cachedData)
    }
}

/// The cursors a ``TestPaginationCallback`` was asked for, under a lock.
private final class CursorLog<Cursor: Sendable>: Sendable {
    /// Held only to append a cursor or copy the lists out, following the rule at ``WaiterList``; no
    /// waiter waits on it.
    private let cursors = LockedValue<(next: [Cursor], prev: [Cursor])>(([], []))

    var next: [Cursor] { cursors.withLock { $0.next } }
    var prev: [Cursor] { cursors.withLock { $0.prev } }

    func record(next cursor: Cursor) { cursors.withLock { $0.next.append(cursor) } }
    func record(prev cursor: Cursor) { cursors.withLock { $0.prev.append(cursor) } }
}
