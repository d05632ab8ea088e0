/// The products of a batch request: the body of `GET /products?ids=1,2,3`.
///
/// Its JSON is `{"products": [...]}`. Ids the catalogue does not hold are left out, so the batch may
/// hold fewer products than ids were asked for.
public struct ProductBatch: Codable, Sendable, Equatable, Hashable {
    /// The most ids one batch request may name; a request with more is refused.
    public static let maximumCount = 100

    /// The products found, in the order their ids were asked for.
    public var products: [Product]

    /// Makes a batch.
    ///
    /// - Parameter products: The products found, in the order their ids were asked for.
    public init(products: [Product]) {
        self.products = products
    }
}
