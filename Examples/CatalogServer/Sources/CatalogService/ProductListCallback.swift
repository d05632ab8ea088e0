import CatalogModel
public import StoreFlowable

/// The cached record of a section of the product list: its products and the cursor of its next page
/// (`nil` once the section is complete).
public typealias ProductListRecord = PagedData<ProductListSection, Int>

/// How a paged store loads one section of the catalogue's product list: its first page, each next page,
/// how pages merge, where the record is cached and when it is too old.
///
/// The list is cut into sections of ``sectionLength`` ids, each a paged store keyed by its number, so
/// that a cursor deep in the list loads at most the pages of one section (not every page before it) and
/// one cached record stays small (about 100 products). Within a section, pages load one at a time
/// however many requests ask for the next one (the store's single flight per direction), and each merges
/// into the cached record.
///
/// The cursor is the upstream's: the id the next page starts after. A section is complete (its next
/// cursor `nil`) once a page reached its last id or the upstream's list ended.
struct ProductListCallback<Cache: KeyedCache<Int, ProductListRecord>>: PaginationStoreFlowableCallback {
    /// The section's number, from 0.
    let key: Int
    /// The manager of every section's store.
    let flowableDataStateManager: FlowableDataStateManager<Int>
    /// Where the records are cached.
    let cache: Cache
    /// Where pages come from.
    let upstream: UpstreamClient
    /// How many ids a section spans.
    let sectionLength: Int
    /// How long a section is fresh: its `freshFor` (the paged store has no stale windows).
    let policy: FreshnessPolicy
    /// Whether other instances write the same cache (PostgreSQL): each merge then reads the record again
    /// first, so that a page is never merged over another instance's write.
    let cacheHasOtherWriters: Bool

    /// The id the section starts after.
    private var start: Int { key * sectionLength }
    /// The section's last id.
    private var end: Int { (key + 1) * sectionLength }

    func loadDataFromCache() async throws -> ProductListRecord? {
        try await cache.entry(forKey: key)?.value
    }

    func saveDataToCache(newData: ProductListRecord?) async throws {
        if let newData {
            try await cache.setEntry(CacheEntry(value: newData, storedAt: cache.clock.now), forKey: key)
        } else {
            try await cache.removeEntry(forKey: key)
        }
    }

    func fetchDataFromOrigin() async throws -> ProductListRecord {
        let page = try await fetchPage(after: start)
        return PagedData(
            data: ProductListSection(products: page.products, loadedAt: cache.clock.now, endsList: page.endsList),
            nextCursor: page.nextCursor)
    }

    func fetchNextDataFromOrigin(nextCursor: Int, data: ProductListSection) async throws -> FetchedPage<
        ProductListSection, Int
    > {
        let page = try await fetchPage(after: nextCursor)
        return FetchedPage(
            data: ProductListSection(products: page.products, loadedAt: data.loadedAt, endsList: page.endsList),
            cursor: page.nextCursor)
    }

    /// Appends the page's products that follow the cached ones (a page fetched twice adds nothing), and
    /// keeps the section's `loadedAt`.
    func mergeNextPage(_ page: ProductListSection, into cachedData: ProductListSection) -> ProductListSection {
        let last = cachedData.products.last?.id ?? start
        return ProductListSection(
            products: cachedData.products + page.products.filter { $0.id > last }, loadedAt: cachedData.loadedAt,
            endsList: page.endsList)
    }

    func needRefresh(cachedData: ProductListSection) async -> Bool {
        policy.freshness(storedAt: cachedData.loadedAt, now: cache.clock.now) != .fresh
    }

    /// The part of the upstream's page after `cursor` that falls in this section, and where the section
    /// goes on.
    ///
    /// - Parameter cursor: The id the page starts after.
    /// - Returns: The section's products of the page; the next cursor, `nil` when the page reached the
    ///   section's last id or the list ended; whether the list ended.
    /// - Throws: What the upstream client throws.
    private func fetchPage(after cursor: Int) async throws -> (products: [Product], nextCursor: Int?, endsList: Bool) {
        let page = try await upstream.page(after: cursor)
        let inside = page.products.filter { $0.id <= end }
        // Products past the section's end: the list goes on in the next section.
        if inside.count < page.products.count { return (inside, nil, false) }
        guard let next = page.nextCursor else { return (inside, nil, true) }
        return (inside, next < end && inside.last?.id != end ? next : nil, false)
    }
}
