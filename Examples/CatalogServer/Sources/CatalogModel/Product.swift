/// A product of the catalogue, as the upstream serves it and the service caches it.
///
/// Its JSON is `{"id": 42, "name": "Product 42", "priceCents": 1234, "description": "...", "version": 1}`.
/// The upstream raises ``version`` by one each time the product is written, so two values of the same
/// product tell which one is newer.
public struct Product: Codable, Sendable, Equatable, Hashable {
    /// The product's identifier, `1...count` in the upstream's catalogue.
    public var id: Int
    /// The product's display name.
    public var name: String
    /// The price in cents, so that no rounding creeps in.
    public var priceCents: Int
    /// A text describing the product.
    public var description: String
    /// How many times the product was stored: 1 for a product nobody wrote, one more on every write.
    public var version: Int

    /// Makes a product from its fields.
    ///
    /// - Parameters:
    ///   - id: The product's identifier.
    ///   - name: The product's display name.
    ///   - priceCents: The price in cents.
    ///   - description: A text describing the product.
    ///   - version: How many times the product was stored (1 for a new one).
    public init(id: Int, name: String, priceCents: Int, description: String, version: Int = 1) {
        self.id = id
        self.name = name
        self.priceCents = priceCents
        self.description = description
        self.version = version
    }
}
