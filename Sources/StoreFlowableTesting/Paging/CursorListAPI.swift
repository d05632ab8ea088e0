public import StoreFlowable

/// A server list API for tests that pages with opaque cursors and grows at both ends, like the history
/// endpoint of a chat: the newest page first, then older pages before it and newer pages after it.
///
/// Call ``latestPage()`` from a two-way paginated callback's `fetchDataFromOrigin()`,
/// ``olderPage(before:)`` from its `fetchPrevDataFromOrigin(prevCursor:data:)` and
/// ``newerPage(after:)`` from its `fetchNextDataFromOrigin(nextCursor:data:)`
/// (``ChatHistoryCallback`` does this for you). Every page lists its items oldest first, so the
/// default merges of a paginated callback (prepend older pages, append newer ones) keep the whole
/// history oldest first.
///
/// ```swift
/// let api = CursorListAPI(items: Array(1...25), pageSize: 10)
/// let latest = try await api.latestPage()                                     // items 16...25
/// let older = try await api.olderPage(before: try #require(latest.prevCursor)) // items 6...15
/// api.append(contentsOf: [26, 27])                                            // new messages arrive
/// let newer = try await api.newerPage(after: try #require(latest.nextCursor))  // items 26...27
/// ```
///
/// Cursors are ``ListCursor`` values: opaque, `Codable`, and valid for the life of the API however the
/// list grows, because they point at a boundary between items rather than at an index. The server
/// side grows with ``append(contentsOf:)`` (new items at the newest end) and ``prepend(contentsOf:)``
/// (older history at the oldest end); items are never removed.
///
/// Ends of the list:
/// - A page's previous (older) cursor is `nil` when the page starts at the oldest item. Items prepended
///   later are reachable only from a cursor handed out after they arrived.
/// - At the newest end, a live list (``isLive``, the default) still hands out a next (newer) cursor, so
///   a client can ask for messages that arrive later; ``newerPage(after:)`` then returns the new items,
///   or an empty page with a cursor at the same place when nothing arrived. A list that is not live,
///   like an archived conversation, hands out `nil` there instead, so a store reports that no newer
///   page exists.
///
/// Requests are recorded, gated, failed and waited for as ``ListAPIDouble`` describes; ``requests``
/// lists them as ``CursorListRequest`` values.
///
/// Promises, besides those of ``ListAPIDouble``:
/// - A request is answered from the server-side list as it is when the request leaves the gate.
/// - A scripted failure is taken before the cursor is checked; a rejected cursor is recorded too.
public final class CursorListAPI<Item: Sendable>: ListAPIDouble {
    /// The server-side list and where its first item sits among the positions cursors point at.
    struct Server: Sendable {
        var items: [Item]
        /// The position of `items[0]`; prepending lowers it, so positions of existing items never change.
        var firstPosition = 0
        var isLive: Bool

        /// The position just after the newest item.
        var endPosition: Int { firstPosition + items.count }

        /// The items at positions `range`, which lies within `firstPosition...endPosition`.
        func items(at range: Range<Int>) -> [Item] {
            Array(items[(range.lowerBound - firstPosition)..<(range.upperBound - firstPosition)])
        }

        /// The cursor continuing with newer items after a page that ends at `end`.
        func newerCursor(from end: Int) -> ListCursor? {
            end < endPosition || isLive ? ListCursor(.newer, at: end) : nil
        }

        /// The cursor continuing with older items before a page that starts at `start`.
        func olderCursor(before start: Int) -> ListCursor? {
            start > firstPosition ? ListCursor(.older, at: start) : nil
        }

        /// Checks that `cursor` points `direction` and within the list.
        func check(_ cursor: ListCursor, points direction: ListCursor.Direction) throws {
            guard cursor.direction == direction else { throw CursorListAPIError.wrongDirection(cursor) }
            guard (firstPosition...endPosition).contains(cursor.position) else {
                throw CursorListAPIError.unknownCursor(cursor)
            }
        }
    }

    /// Guards the server-side list, following the rule at ``WaiterList``: held only to read or update
    /// it; a request copies it out and builds its page after unlocking. No waiter waits on it.
    private let server: LockedValue<Server>

    /// The machinery behind the members of ``ListAPIDouble``; use those members instead.
    public let requestControl = ListAPIControl<CursorListRequest>()

    /// The largest number of items on a page.
    public let pageSize: Int

    /// Creates an API serving `items`, oldest first, in pages of `pageSize`.
    ///
    /// - Parameters:
    ///   - items: The server-side list, oldest first.
    ///   - pageSize: The largest number of items on a page; must be at least 1.
    ///   - isLive: Whether the newest page carries a next cursor for items that arrive later (see
    ///     ``isLive``); `true` by default.
    public init(items: [Item] = [], pageSize: Int, isLive: Bool = true) {
        precondition(pageSize >= 1, "CursorListAPI needs a page size of at least 1, not \(pageSize)")
        server = LockedValue(Server(items: items, isLive: isLive))
        self.pageSize = pageSize
    }

    // MARK: Server-side data

    /// The server-side list, oldest first. Reading it is not a request.
    public var items: [Item] {
        server.withLock { $0.items }
    }

    /// Whether the list is live: whether a page that ends at the newest item carries a next cursor, so
    /// that a client can ask for items that arrive later. Set it to `false` to close the list, like an
    /// archived conversation: such pages then carry a `nil` next cursor.
    ///
    /// A change affects the requests that leave the gate after it.
    public var isLive: Bool {
        get { server.withLock { $0.isLive } }
        set { server.withLock { $0.isLive = newValue } }
    }

    /// Adds items at the newest end, as when new messages arrive.
    ///
    /// A next cursor handed out at the newest end now continues with them. Affects the requests that
    /// leave the gate after it, including requests waiting at the gate now.
    ///
    /// - Parameter newItems: The new items, oldest first.
    public func append(contentsOf newItems: [Item]) {
        server.withLock { $0.items.append(contentsOf: newItems) }
    }

    /// Adds items at the oldest end, as when older history becomes available.
    ///
    /// Cursors handed out before stay valid and keep pointing at the same items; a page that started at
    /// the oldest item already returned a `nil` previous cursor, so only pages answered from now on
    /// reach these items.
    ///
    /// - Parameter olderItems: The older items, oldest first.
    public func prepend(contentsOf olderItems: [Item]) {
        server.withLock { server in
            server.items.insert(contentsOf: olderItems, at: 0)
            server.firstPosition -= olderItems.count
        }
    }

    // MARK: Requests

    /// Answers a request for the newest page, as a two-way paginated callback's `fetchDataFromOrigin()`
    /// needs it.
    ///
    /// - Returns: The newest ``pageSize`` items (all of them when there are fewer), oldest first;
    ///   `prevCursor` continues with older items and is `nil` when the page starts at the oldest item;
    ///   `nextCursor` continues with items that arrive later, and is `nil` when the list is not live.
    /// - Throws: `CancellationError` when the calling task is cancelled (see the type's promises), or
    ///   the next failure scripted with ``failNextRequests(_:with:)``.
    public func latestPage() async throws -> PagedData<[Item], ListCursor> {
        let pageSize = pageSize
        return try await requestControl.perform(.latest) {
            let server = server.withLock { $0 }
            let end = server.endPosition
            let start = max(server.firstPosition, end - pageSize)
            return PagedData(
                data: server.items(at: start..<end), nextCursor: server.newerCursor(from: end),
                prevCursor: server.olderCursor(before: start))
        }
    }

    /// Answers a request for the page of items just older than `cursor`, as a two-way paginated
    /// callback's `fetchPrevDataFromOrigin(prevCursor:data:)` needs it.
    ///
    /// - Parameter cursor: A previous (older) cursor this API handed out.
    /// - Returns: Up to ``pageSize`` items just before the cursor, oldest first, with the cursor that
    ///   continues with older items, or `nil` when the page starts at the oldest item.
    /// - Throws: `CancellationError` when the calling task is cancelled (see the type's promises); the
    ///   next failure scripted with ``failNextRequests(_:with:)``;
    ///   ``CursorListAPIError/wrongDirection(_:)`` for a next cursor; or
    ///   ``CursorListAPIError/unknownCursor(_:)`` for a cursor this API did not hand out.
    public func olderPage(before cursor: ListCursor) async throws -> FetchedPage<[Item], ListCursor> {
        let pageSize = pageSize
        return try await requestControl.perform(.older(cursor)) {
            let server = server.withLock { $0 }
            try server.check(cursor, points: .older)
            let start = max(server.firstPosition, cursor.position - pageSize)
            return FetchedPage(
                data: server.items(at: start..<cursor.position), cursor: server.olderCursor(before: start))
        }
    }

    /// Answers a request for the page of items just newer than `cursor`, as a two-way paginated
    /// callback's `fetchNextDataFromOrigin(nextCursor:data:)` needs it.
    ///
    /// - Parameter cursor: A next (newer) cursor this API handed out.
    /// - Returns: Up to ``pageSize`` items just after the cursor, oldest first, possibly none, with the
    ///   cursor that continues with newer items: `nil` only when the page ends at the newest item and
    ///   the list is not live.
    /// - Throws: `CancellationError` when the calling task is cancelled (see the type's promises); the
    ///   next failure scripted with ``failNextRequests(_:with:)``;
    ///   ``CursorListAPIError/wrongDirection(_:)`` for a previous cursor; or
    ///   ``CursorListAPIError/unknownCursor(_:)`` for a cursor this API did not hand out.
    public func newerPage(after cursor: ListCursor) async throws -> FetchedPage<[Item], ListCursor> {
        let pageSize = pageSize
        return try await requestControl.perform(.newer(cursor)) {
            let server = server.withLock { $0 }
            try server.check(cursor, points: .newer)
            let end = min(server.endPosition, cursor.position + pageSize)
            return FetchedPage(data: server.items(at: cursor.position..<end), cursor: server.newerCursor(from: end))
        }
    }
}
