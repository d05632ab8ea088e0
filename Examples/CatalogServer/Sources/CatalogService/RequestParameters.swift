/// Reads the ids and cursors of the service's paths and queries.
enum RequestParameters {
    /// The product id of a path: a positive integer.
    ///
    /// - Parameter text: The path parameter, if any.
    /// - Returns: The id.
    /// - Throws: ``CatalogError/invalidProductID(_:)``.
    static func productID(_ text: String?) throws(CatalogError) -> Int {
        guard let text, let id = Int(text), id > 0 else { throw .invalidProductID(text ?? "") }
        return id
    }

    /// The `cursor` of a page request: an integer from 0 to ``CatalogRepository/maximumCursor``; 0 when
    /// absent.
    ///
    /// - Parameter text: The query parameter, if any.
    /// - Returns: The cursor.
    /// - Throws: ``CatalogError/invalidCursor(_:)``.
    static func cursor(_ text: String?) throws(CatalogError) -> Int {
        guard let text else { return 0 }
        guard let cursor = Int(text), cursor >= 0, cursor <= maximumCursor else { throw .invalidCursor(text) }
        return cursor
    }

    /// The largest cursor accepted: far beyond any catalogue, small enough for the list's arithmetic.
    static var maximumCursor: Int { 1 << 52 }
}
