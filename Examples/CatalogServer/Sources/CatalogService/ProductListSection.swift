public import CatalogModel
public import StoreFlowable

/// The products of one section of the catalogue's list loaded so far: the data of a paged store of
/// ``ProductListCallback``, cached (with its next cursor, as `PagedData`) in the `<name>_pages` table.
///
/// Section `s` spans the ids after `s × length` up to `(s + 1) × length`; it fills page by page as
/// clients read further into it.
public struct ProductListSection: Codable, Sendable, Equatable {
    /// The products loaded, in id order.
    public var products: [Product]
    /// When the section's first page was fetched, by the cache's clock. Its freshness is counted from
    /// here, not from the last page merged in: a section is fetched again from its first page a fixed
    /// time after it started, however far clients read meanwhile.
    public var loadedAt: CacheTime
    /// Whether the upstream's list ends inside this section: no product follows the last one loaded.
    public var endsList: Bool

    /// Makes a section.
    ///
    /// - Parameters:
    ///   - products: The products loaded, in id order.
    ///   - loadedAt: When the first page was fetched.
    ///   - endsList: Whether the list ends in this section.
    public init(products: [Product], loadedAt: CacheTime, endsList: Bool) {
        self.products = products
        self.loadedAt = loadedAt
        self.endsList = endsList
    }
}
