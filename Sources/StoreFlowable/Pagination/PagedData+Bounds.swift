/// Keeping a long list bounded, for ``PaginationStoreFlowableCallback/trimAfterNextPage(_:)`` and
/// ``TwoWayPaginationStoreFlowableCallback/trimAfterPrevPage(_:)``.
extension PagedData where Data: RangeReplaceableCollection {
    /// This record with at most `maxCount` items, the first ones dropped; when items are dropped, the
    /// previous cursor becomes the cursor of the page before the first kept item.
    ///
    /// Use it after a next page was merged. A keyset API usually builds that cursor from the item
    /// itself (`.before(item.id)`); a page-number API can keep whole pages by choosing `maxCount` as a
    /// multiple of its page size. With one-way paging, return `nil`: the dropped items come back with a
    /// refresh.
    ///
    /// - Parameters:
    ///   - maxCount: The most items to keep; values below one count as one.
    ///   - prevCursor: The cursor of the page before the given item, the first one kept.
    /// - Returns: The bounded record; `self` when it has at most `maxCount` items.
    public func keepingLast(_ maxCount: Int, prevCursor: (Data.Element) -> Cursor?) -> PagedData {
        let excess = data.count - Swift.max(maxCount, 1)
        guard excess > 0 else { return self }
        let kept = Data(data.dropFirst(excess))
        return PagedData(data: kept, nextCursor: nextCursor, prevCursor: kept.first.flatMap(prevCursor))
    }

    /// This record with at most `maxCount` items, the last ones dropped; when items are dropped, the
    /// next cursor becomes the cursor of the page after the last kept item.
    ///
    /// Use it after a previous page was merged; the mirror of ``keepingLast(_:prevCursor:)``.
    ///
    /// - Parameters:
    ///   - maxCount: The most items to keep; values below one count as one.
    ///   - nextCursor: The cursor of the page after the given item, the last one kept.
    /// - Returns: The bounded record; `self` when it has at most `maxCount` items.
    public func keepingFirst(_ maxCount: Int, nextCursor: (Data.Element) -> Cursor?) -> PagedData {
        let keep = Swift.max(maxCount, 1)
        guard data.count > keep else { return self }
        let kept = Data(data.prefix(keep))
        var last: Data.Element?
        for element in kept { last = element }
        return PagedData(data: kept, nextCursor: last.flatMap(nextCursor), prevCursor: prevCursor)
    }
}
