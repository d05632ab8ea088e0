/// Paged data as the cache holds it: the pages loaded so far, merged into one value, with the cursors
/// that continue it in each direction.
///
/// A paginated callback reads and writes this record, so the cursors are persisted together with the
/// data: a process that restarts with a persistent cache resumes paging where it stopped. The first
/// page a paginated callback fetches from the origin is a record of this type too.
///
/// A `nil` cursor means "no more pages in this direction"; there is no other way to say it, so an
/// empty string or a zero page number is an ordinary cursor.
public struct PagedData<Data: Sendable, Cursor: Sendable>: Sendable {
    /// The pages loaded so far, merged into one value (for example, every item of a list).
    public var data: Data
    /// The cursor of the page after the last loaded one, or `nil` when there is no next page.
    public var nextCursor: Cursor?
    /// The cursor of the page before the first loaded one, or `nil` when there is no previous page
    /// (always `nil` for one-way paging).
    public var prevCursor: Cursor?

    /// Creates a record of loaded pages and their cursors.
    ///
    /// - Parameters:
    ///   - data: The pages loaded so far, merged into one value.
    ///   - nextCursor: The cursor of the next page, or `nil` when there is none.
    ///   - prevCursor: The cursor of the previous page, or `nil` when there is none (one-way paging
    ///     leaves it out).
    public init(data: Data, nextCursor: Cursor?, prevCursor: Cursor? = nil) {
        self.data = data
        self.nextCursor = nextCursor
        self.prevCursor = prevCursor
    }
}

extension PagedData: Equatable where Data: Equatable, Cursor: Equatable {}

extension PagedData: Hashable where Data: Hashable, Cursor: Hashable {}

extension PagedData: Codable where Data: Codable, Cursor: Codable {}
