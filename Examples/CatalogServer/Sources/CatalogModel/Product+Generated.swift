extension Product {
    /// The words a generated product's description is made of.
    private static let descriptionWords = [
        "sturdy", "light", "compact", "handmade", "recycled", "classic", "modern", "portable", "quiet",
        "bright", "durable", "soft", "waterproof", "foldable", "smart", "steel", "oak", "cotton", "glass",
        "ceramic", "lamp", "chair", "kettle", "backpack", "notebook", "speaker", "jacket", "blanket", "mug",
        "shelf", "with", "for", "every", "day", "and", "a", "two-year", "warranty", "in", "stock",
    ]

    /// The length a generated description reaches, which puts a generated product's JSON at about
    /// 300 bytes.
    private static let generatedDescriptionLength = 210

    /// The product the upstream serves for `id` until someone writes it: always the same for the same
    /// `id`, on every machine and in every run.
    ///
    /// Its name is `Product <id>`, its price and description are derived from `id`, and its version
    /// is 1. Its JSON is about 300 bytes long.
    ///
    /// - Parameter id: The product's identifier (any integer; the upstream uses `1...count`).
    /// - Returns: The generated product with that identifier.
    public static func generated(id: Int) -> Product {
        // A 64-bit linear congruential generator seeded by the id: deterministic, and different
        // products get different prices and descriptions.
        var state = UInt64(bitPattern: Int64(id)) &* 0x9E37_79B9_7F4A_7C15 &+ 0x2545_F491_4F6C_DD1D
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        let priceCents = 99 + next() % 99_900
        var description = "Product \(id):"
        while description.count < generatedDescriptionLength {
            description += " " + descriptionWords[next() % descriptionWords.count]
        }
        description += "."
        return Product(
            id: id, name: "Product \(id)", priceCents: priceCents, description: description, version: 1)
    }
}
