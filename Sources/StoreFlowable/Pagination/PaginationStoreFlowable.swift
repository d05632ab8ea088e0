/// A store for a list that grows by pages in one direction: everything a ``StoreFlowable`` does, plus
/// loading the next page.
///
/// `publish()` reports the next direction in every completed state:
/// `.completed(content:next:prev:)` with `next` set to `.fixed(canRequestAdditionalData:)` (whether a
/// next page exists), `.loading` while it loads, or `.error(rawError:)` after it failed; `prev` is
/// always `.fixed(canRequestAdditionalData: false)`.
///
/// `update(newData:)` keeps the cached cursors; ``update(newData:nextCursor:)`` sets them.
///
/// The promises of paging (single flight per direction, refreshes and updates winning over a page in
/// flight, errors kept with the content) are listed in `Docs/Pagination.md`.
public protocol PaginationStoreFlowable<Data, Cursor>: StoreFlowable {
    /// The type that identifies a page to the origin.
    associatedtype Cursor: Sendable

    /// Loads the page after the cached data, merges it into the cache, and waits until that is done.
    ///
    /// Joins the next-page load already in flight, if any; any number of concurrent calls cause one
    /// origin fetch. It returns without fetching when:
    /// - nothing is cached yet (load the first page with `publish()`, `refresh()` or `requireData()`);
    /// - the cached next cursor is `nil` (no more pages);
    /// - the key is loading its first page or refreshing, an update or clear is in progress, or the
    ///   last refresh failed: the page would be merged into data about to be replaced, or stale;
    /// - the last next-page load failed and `continueWhenError` is `false` (the error stays as it is).
    ///
    /// When the cached data is stale (``PaginationStoreFlowableCallback/needRefresh(cachedData:)``),
    /// it refreshes the first page instead of appending to stale data, and waits for the refresh.
    /// The outcome is reported through `publish()`; a refresh, update or clear that starts while the
    /// page loads discards the page. It returns early when the calling task is cancelled, and the load
    /// is cancelled when no caller and no `publish()` stream waits for it any more.
    ///
    /// - Parameter continueWhenError: Whether to retry after the last next-page load failed.
    /// - Returns: What the request did: ``PageRequestResult/loaded``, ``PageRequestResult/noMorePages``,
    ///   ``PageRequestResult/refreshedFirstPage``, ``PageRequestResult/failed(_:)``,
    ///   ``PageRequestResult/superseded``, ``PageRequestResult/cancelled``, or
    ///   ``PageRequestResult/turnedAway(_:)`` with the reason.
    @discardableResult
    func requestNextData(continueWhenError: Bool) async -> PageRequestResult

    /// The next direction's state and cached cursor, read without subscribing: whether another page
    /// exists and whether one is loading or failed.
    ///
    /// Reads the cache on the caller's task and asks the state manager, which holds nothing for the
    /// key afterwards.
    ///
    /// - Returns: The direction's state (as `publish()` reports it in a completed state) and its cursor.
    /// - Throws: ``StoreFlowableError/cacheReadFailed(underlying:)`` when the cache read throws.
    func nextPageState() async throws -> PageState<Cursor>

    /// Replaces the cached data and its next cursor, and tells every subscriber.
    ///
    /// Keeps every promise of ``StoreFlowable/update(newData:)``; a page load in flight is discarded.
    /// With `nil` data the cached record is deleted whatever the cursor.
    ///
    /// - Parameters:
    ///   - newData: The new value, or `nil` to delete the cached record.
    ///   - nextCursor: The cursor of the page after `newData`, or `nil` when there is none.
    func update(newData: Data?, nextCursor: Cursor?) async
}

extension PaginationStoreFlowable {
    /// Loads the next page, retrying after a failed one; see ``requestNextData(continueWhenError:)``.
    ///
    /// - Returns: What the request did.
    @discardableResult
    public func requestNextData() async -> PageRequestResult {
        await requestNextData(continueWhenError: true)
    }
}
