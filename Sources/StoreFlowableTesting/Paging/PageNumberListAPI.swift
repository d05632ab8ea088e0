public import StoreFlowable

/// A server list API for tests that pages by page number: the cursor is an `Int`, page `0` is the
/// first page, and each page holds ``pageSize`` items.
///
/// Call ``firstPage()`` from a paginated callback's `fetchDataFromOrigin()` and ``page(_:)`` from its
/// `fetchNextDataFromOrigin(nextCursor:data:)` (``PageNumberListCallback`` does this for you). The
/// server-side list is ``items``; set it at any time to simulate the list changing on the server.
///
/// ```swift
/// let api = PageNumberListAPI(items: Array(1...25), pageSize: 10)
/// let first = try await api.firstPage()       // items 1...10, nextCursor 1
/// let last = try await api.page(2)            // items 21...25, cursor nil
/// #expect(api.requestedPages == [0, 2])
/// api.failNextRequests(1, with: Offline())    // the next request throws Offline()
/// api.hold()                                  // requests now wait at the gate until release()
/// ```
///
/// Paging: page `n` holds the items at indices `n * pageSize ..< min((n + 1) * pageSize, items.count)`.
/// The list has `max(1, ⌈items.count / pageSize⌉)` pages: page `0` always exists, and is empty for an
/// empty list. A page's cursor is `n + 1` when items follow it and `nil` when it is the last page, so
/// a list of exactly `k * pageSize` items ends at page `k - 1` without an empty page after it.
///
/// Promises:
/// - Every member may be used from any task, concurrently.
/// - A request is recorded in ``requestedPages`` and counted in ``requestCount`` when it arrives,
///   before the gate; failed, cancelled and out-of-range requests are recorded too.
/// - A request is answered from ``items`` as they are when it leaves the gate.
/// - A request whose task is cancelled before it arrives at a held gate, while it waits there, or by
///   the time it leaves the gate throws `CancellationError`, takes no scripted failure, and counts in
///   ``cancelledCount``, like an HTTP client that stops a cancelled request.
/// - Failures scripted with ``failNextRequests(_:with:)`` are taken in the order requests leave the
///   gate, before the page number is checked.
/// - The waiting methods suspend without polling, return at once when their condition already holds,
///   and return early when the calling task is cancelled.
public final class PageNumberListAPI<Item: Sendable>: Sendable {
    private let server: LockedValue<[Item]>
    private let control = ListAPIControl<Int>()

    /// The number of items on a full page.
    public let pageSize: Int

    /// Creates an API serving `items` in pages of `pageSize`.
    ///
    /// - Parameters:
    ///   - items: The server-side list, in the order the pages serve it.
    ///   - pageSize: The number of items on a full page; must be at least 1.
    public init(items: [Item] = [], pageSize: Int) {
        precondition(pageSize >= 1, "PageNumberListAPI needs a page size of at least 1, not \(pageSize)")
        server = LockedValue(items)
        self.pageSize = pageSize
    }

    // MARK: Server-side data

    /// The server-side list; set it to simulate the list changing on the server.
    ///
    /// Reading or writing it is not a request. A change affects the requests that leave the gate after
    /// it, including requests waiting at the gate now.
    public var items: [Item] {
        get { server.withLock { $0 } }
        set { server.withLock { $0 = newValue } }
    }

    /// The number of pages the server-side list has now: `max(1, ⌈items.count / pageSize⌉)`.
    public var pageCount: Int {
        Self.pageCount(itemCount: server.withLock { $0.count }, pageSize: pageSize)
    }

    // MARK: Requests

    /// Answers a request for the first page (page `0`), as a paginated callback's
    /// `fetchDataFromOrigin()` needs it.
    ///
    /// Recorded as page `0` in ``requestedPages``.
    ///
    /// - Returns: The first page's items, with `nextCursor` `1` when more items follow and `nil`
    ///   otherwise; `prevCursor` is always `nil`.
    /// - Throws: `CancellationError` when the calling task is cancelled (see the type's promises), or
    ///   the next failure scripted with ``failNextRequests(_:with:)``.
    public func firstPage() async throws -> PagedData<[Item], Int> {
        let page = try await page(0)
        return PagedData(data: page.data, nextCursor: page.cursor)
    }

    /// Answers a request for page `number`, as a paginated callback's
    /// `fetchNextDataFromOrigin(nextCursor:data:)` needs it.
    ///
    /// - Parameter number: The page number, the cursor a previous page returned.
    /// - Returns: The page's items, with cursor `number + 1` when more items follow and `nil` when it is
    ///   the last page.
    /// - Throws: `CancellationError` when the calling task is cancelled (see the type's promises); the
    ///   next failure scripted with ``failNextRequests(_:with:)``; or
    ///   ``PageNumberListAPIError/pageOutOfRange(page:pageCount:)`` when `number` is negative or not
    ///   below ``pageCount`` at the moment the request is answered.
    public func page(_ number: Int) async throws -> FetchedPage<[Item], Int> {
        let pageSize = pageSize
        return try await control.perform(number) {
            let items = server.withLock { $0 }
            let pageCount = Self.pageCount(itemCount: items.count, pageSize: pageSize)
            guard number >= 0, number < pageCount else {
                throw PageNumberListAPIError.pageOutOfRange(page: number, pageCount: pageCount)
            }
            // `number < pageCount` bounds the start by `items.count` (page 0 of an empty list starts at
            // 0), so the slice is in range.
            let start = number * pageSize
            let end = min(start + pageSize, items.count)
            return FetchedPage(data: Array(items[start..<end]), cursor: end < items.count ? number + 1 : nil)
        }
    }

    /// The number of pages of a list of `itemCount` items.
    private static func pageCount(itemCount: Int, pageSize: Int) -> Int {
        max(1, (itemCount + pageSize - 1) / pageSize)
    }

    // MARK: Records

    /// The page numbers requested so far, in the order the requests arrived; ``firstPage()`` records
    /// `0`.
    public var requestedPages: [Int] {
        control.requests
    }

    /// The number of requests so far, including failed, cancelled and out-of-range ones.
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

    /// The largest number of requests that ever ran at the same time; a store that keeps its
    /// single-flight promise keeps this at 1.
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
