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
/// Promises:
/// - Every member may be used from any task, concurrently.
/// - A request is recorded in ``requests`` and counted in ``requestCount`` when it arrives, before
///   the gate; failed, cancelled and rejected requests are recorded too.
/// - A request is answered from the server-side list as it is when the request leaves the gate.
/// - A request whose task is cancelled before it arrives at a held gate, while it waits there, or by
///   the time it leaves the gate throws `CancellationError`, takes no scripted failure, and counts in
///   ``cancelledCount``, like an HTTP client that stops a cancelled request.
/// - Failures scripted with ``failNextRequests(_:with:)`` are taken in the order requests leave the
///   gate, before the cursor is checked.
/// - The waiting methods suspend without polling, return at once when their condition already holds,
///   and return early when the calling task is cancelled.
public final class CursorListAPI<Item: Sendable>: Sendable {
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

    private let server: LockedValue<Server>
    private let control = ListAPIControl<CursorListRequest>()

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
        return try await control.perform(.latest) {
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
        return try await control.perform(.older(cursor)) {
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
        return try await control.perform(.newer(cursor)) {
            let server = server.withLock { $0 }
            try server.check(cursor, points: .newer)
            let end = min(server.endPosition, cursor.position + pageSize)
            return FetchedPage(data: server.items(at: cursor.position..<end), cursor: server.newerCursor(from: end))
        }
    }

    // MARK: Records

    /// The requests so far, in the order they arrived, including failed, cancelled and rejected ones.
    public var requests: [CursorListRequest] {
        control.requests
    }

    /// The number of requests so far, including failed, cancelled and rejected ones.
    public var requestCount: Int {
        control.requestCount
    }

    /// The number of requests that threw `CancellationError` because their task was cancelled.
    public var cancelledCount: Int {
        control.cancelledCount
    }

    /// The number of requests running right now, including those waiting at the gate.
    public var inFlightCount: Int {
        control.inFlightCount
    }

    /// The largest number of requests that ever ran at the same time. A two-way store may load one
    /// page in each direction at once, so 2 is fine there.
    public var maxConcurrentRequests: Int {
        control.maxConcurrentRequests
    }

    /// The number of requests waiting at the held gate right now.
    public var waitingAtGateCount: Int {
        control.waitingAtGateCount
    }

    /// The number of scripted failures no request has taken yet.
    public var pendingFailureCount: Int {
        control.pendingFailureCount
    }

    // MARK: Scripting

    /// Makes the next `count` requests that leave the gate throw `error` instead of answering.
    ///
    /// Calls add up: failing 1 request and then 2 more fails the next 3. A cancelled request takes no
    /// failure.
    ///
    /// - Parameters:
    ///   - count: The number of requests to fail; must be at least 0.
    ///   - error: The error those requests throw.
    public func failNextRequests(_ count: Int, with error: any Error) {
        control.failNextRequests(count, with: error)
    }

    /// Closes the gate: every request that arrives from now on waits at it until ``release()``.
    ///
    /// Requests already past the gate are not affected.
    public func hold() {
        control.hold()
    }

    /// Opens the gate and lets every request waiting at it continue, in arrival order.
    ///
    /// The gate stays open until the next ``hold()``.
    public func release() {
        control.release()
    }

    // MARK: Waiting

    /// Suspends until at least `count` requests have arrived.
    ///
    /// A request that arrived while the gate was held is already waiting at the gate by the time this
    /// returns. Returns at once when that is already true, and early when the calling task is
    /// cancelled.
    ///
    /// - Parameter count: The number of requests to wait for (see ``requestCount``).
    public func waitForRequests(_ count: Int) async {
        await control.waitForRequests(count)
    }

    /// Suspends until at least `count` requests have thrown `CancellationError`.
    ///
    /// Returns at once when that is already true, and early when the calling task is cancelled.
    ///
    /// - Parameter count: The number of cancelled requests to wait for (see ``cancelledCount``).
    public func waitForCancellations(_ count: Int) async {
        await control.waitForCancellations(count)
    }
}
