/// A store for a list that grows by pages in both directions: everything a
/// ``PaginationStoreFlowable`` does, plus loading the previous page.
///
/// `publish()` reports both directions in every completed state, each as
/// `.fixed(canRequestAdditionalData:)`, `.loading` or `.error(rawError:)`. A next and a previous page
/// may load at the same time; a failure in one direction leaves the other as it is.
public protocol TwoWayPaginationStoreFlowable<Data, Cursor>: PaginationStoreFlowable {
    /// Loads the page before the cached data, merges it into the cache, and waits until that is done.
    ///
    /// The mirror of ``PaginationStoreFlowable/requestNextData(continueWhenError:)``, with the same
    /// outcomes for the previous direction.
    ///
    /// - Parameter continueWhenError: Whether to retry after the last previous-page load failed.
    /// - Returns: What the request did.
    @discardableResult
    func requestPrevData(continueWhenError: Bool) async -> PageRequestResult

    /// The previous direction's state and cached cursor, read without subscribing; the mirror of
    /// ``PaginationStoreFlowable/nextPageState()``.
    ///
    /// - Returns: The direction's state and its cursor.
    /// - Throws: ``StoreFlowableError/cacheReadFailed(underlying:)`` when the cache read throws.
    func prevPageState() async throws -> PageState<Cursor>

    /// Replaces the cached data and both its cursors, and tells every subscriber.
    ///
    /// Keeps every promise of ``StoreFlowable/update(newData:)``; page loads in flight are discarded.
    ///
    /// - Parameters:
    ///   - newData: The new value, or `nil` to delete the cached record.
    ///   - nextCursor: The cursor of the page after `newData`, or `nil` when there is none.
    ///   - prevCursor: The cursor of the page before `newData`, or `nil` when there is none.
    func update(newData: Data?, nextCursor: Cursor?, prevCursor: Cursor?) async
}

extension TwoWayPaginationStoreFlowable {
    /// Loads the previous page, retrying after a failed one; see
    /// ``requestPrevData(continueWhenError:)``.
    ///
    /// - Returns: What the request did.
    @discardableResult
    public func requestPrevData() async -> PageRequestResult {
        await requestPrevData(continueWhenError: true)
    }
}
