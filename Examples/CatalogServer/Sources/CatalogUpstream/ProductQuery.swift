import CatalogModel

/// What a `GET /products?...` request asks for: a batch of ids, or a page after a cursor.
///
/// Parsed from the query with ``init(ids:cursor:limit:)``, which refuses anything else with a 400.
enum ProductQuery: Sendable, Equatable {
    /// `?ids=1,2,3`: these products, in this order, each once.
    case batch(ids: [Int])
    /// `?cursor=C&limit=L`: at most `limit` products after the id `cursor`.
    case page(cursor: Int, limit: Int)

    /// Parses the query's parameters.
    ///
    /// - Parameters:
    ///   - ids: The `ids` parameter: comma-separated ids, 1 to ``ProductBatch/maximumCount`` of them
    ///     (repeated ids are served once).
    ///   - cursor: The `cursor` parameter: an integer, 0 or more (0 when absent).
    ///   - limit: The `limit` parameter: 1 to ``ProductPage/maximumLimit`` (``ProductPage/defaultLimit``
    ///     when absent).
    /// - Throws: ``UpstreamRequestError`` (400) naming the parameter that is malformed or out of range, or
    ///   when `ids` comes with `cursor` or `limit`.
    init(ids: Substring?, cursor: Substring?, limit: Substring?) throws(UpstreamRequestError) {
        if let ids {
            guard cursor == nil, limit == nil else {
                throw .badRequest("ask either for ids, or for a page with cursor and limit, not both")
            }
            self = .batch(ids: try Self.parseIDs(ids))
            return
        }
        let cursorValue = try Self.parseInteger(cursor, name: "cursor", default: 0)
        guard cursorValue >= 0 else { throw .badRequest("cursor must be 0 or more, not \(cursorValue)") }
        let limitValue = try Self.parseInteger(limit, name: "limit", default: ProductPage.defaultLimit)
        guard (1...ProductPage.maximumLimit).contains(limitValue) else {
            throw .badRequest("limit must be from 1 to \(ProductPage.maximumLimit), not \(limitValue)")
        }
        self = .page(cursor: cursorValue, limit: limitValue)
    }

    /// Parses `1,2,3` into ids, each once, in their first order.
    private static func parseIDs(_ text: Substring) throws(UpstreamRequestError) -> [Int] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard !text.isEmpty else { throw .badRequest("ids must name at least one id") }
        guard parts.count <= ProductBatch.maximumCount else {
            throw .badRequest("ids may name at most \(ProductBatch.maximumCount) ids, not \(parts.count)")
        }
        var seen: Set<Int> = []
        var ids: [Int] = []
        for part in parts {
            guard let id = Int(part) else { throw .badRequest("ids must be integers separated by commas: '\(part)'") }
            if seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }

    /// Parses an optional integer parameter.
    private static func parseInteger(
        _ text: Substring?, name: String, default defaultValue: Int
    ) throws(UpstreamRequestError) -> Int {
        guard let text else { return defaultValue }
        guard let value = Int(text) else { throw .badRequest("\(name) must be an integer, not '\(text)'") }
        return value
    }
}
