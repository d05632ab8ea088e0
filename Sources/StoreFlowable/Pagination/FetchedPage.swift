/// A page fetched from the origin after (or before) the data already loaded, with the cursor that
/// continues paging in the same direction.
///
/// A paginated callback returns one from `fetchNextDataFromOrigin(nextCursor:data:)` and
/// `fetchPrevDataFromOrigin(prevCursor:data:)`. The store merges ``data`` into the cached data and
/// stores ``cursor`` as the new next (or previous) cursor.
public struct FetchedPage<Data: Sendable, Cursor: Sendable>: Sendable {
    /// The items of the page.
    public var data: Data
    /// The cursor of the page beyond this one in the direction it was fetched (the next page for a next
    /// page, the previous page for a previous page), or `nil` when this page is the last one that way.
    public var cursor: Cursor?

    /// Creates a fetched page.
    ///
    /// - Parameters:
    ///   - data: The items of the page.
    ///   - cursor: The cursor of the page beyond this one in the same direction, or `nil` when there is
    ///     none.
    public init(data: Data, cursor: Cursor?) {
        self.data = data
        self.cursor = cursor
    }
}

extension FetchedPage: Equatable where Data: Equatable, Cursor: Equatable {}

extension FetchedPage: Hashable where Data: Hashable, Cursor: Hashable {}
