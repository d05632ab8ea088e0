/// A page of the product list: the body of `GET /products?cursor=C&limit=L`.
///
/// Its JSON is `{"products": [...], "nextCursor": 40}`, or `"nextCursor": null` on the last page.
public struct ProductPage: Codable, Sendable, Equatable, Hashable {
    /// How many products a page holds when the request names no limit.
    public static let defaultLimit = 20
    /// The most products one page may hold; a larger limit is refused.
    public static let maximumLimit = 100

    /// The products of the page, in id order.
    public var products: [Product]
    /// The cursor of the next page (the last id of this one), or `nil` when this page is the last.
    public var nextCursor: Int?

    /// Makes a page.
    ///
    /// - Parameters:
    ///   - products: The products of the page, in id order.
    ///   - nextCursor: The cursor of the next page, or `nil` when this page is the last.
    public init(products: [Product], nextCursor: Int?) {
        self.products = products
        self.nextCursor = nextCursor
    }

    /// Encodes the page, writing `"nextCursor": null` on the last page rather than leaving the key out.
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(products, forKey: .products)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}
