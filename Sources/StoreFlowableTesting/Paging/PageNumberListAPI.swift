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
/// Requests are recorded, gated, failed and waited for as ``ListAPIDouble`` describes; ``requests``
/// (and its older name ``requestedPages``) lists them as page numbers.
///
/// Promises, besides those of ``ListAPIDouble``:
/// - A request is answered from ``items`` as they are when it leaves the gate.
/// - A scripted failure is taken before the page number is checked; an out-of-range request is
///   recorded too.
public final class PageNumberListAPI<Item: Sendable>: ListAPIDouble {
    /// Guards the server-side list, following the rule at ``WaiterList``: held only to read or update
    /// it, and a replaced list is released after unlocking; a request copies the list out and builds
    /// its page after unlocking. No waiter waits on it.
    private let server: LockedValue<[Item]>

    /// The machinery behind the members of ``ListAPIDouble``; use those members instead.
    public let requestControl = ListAPIControl<Int>()

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
        set { _ = server.replace(\.self, with: newValue) }
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
        return try await requestControl.perform(number) {
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
    /// `0`. The same as ``requests``.
    public var requestedPages: [Int] {
        requests
    }
}
