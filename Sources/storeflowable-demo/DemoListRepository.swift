import StoreFlowable

/// The demo's local cache for lists: each list's loaded pages, with their next cursor, kept in memory
/// with the time they were saved.
actor DemoListCache {
    private let clock = ContinuousClock()
    private var entries: [String: (record: PagedData<[ListItem], Int>, savedAt: ContinuousClock.Instant)] = [:]

    /// The cached pages of list `key` with their cursor, or `nil` when the list is not cached.
    func record(key: String) -> PagedData<[ListItem], Int>? {
        entries[key]?.record
    }

    /// How long ago list `key` was saved, or `nil` when it is not cached.
    func age(key: String) -> Duration? {
        entries[key].map { entry in entry.savedAt.duration(to: clock.now) }
    }

    /// Saves `record` as list `key`, or deletes list `key` when `record` is `nil`.
    func save(_ record: PagedData<[ListItem], Int>?, key: String) {
        entries[key] = record.map { record in (record, clock.now) }
    }
}

/// The repository layer for paged lists: tells a paginated store how to read and write the cached
/// pages, how to fetch the first page and the next ones, and when the cached list is too old to serve.
///
/// The cursor is the origin's page number, from 0; `nil` means there are no more pages. Pages are merged by the
/// protocol's default for arrays, which appends them.
struct ListRepository: PaginationStoreFlowableCallback {
    /// One manager for every list. Sharing it is what makes all stores of the same list share one state
    /// and one page fetch at a time.
    static let manager = FlowableDataStateManager<String>()

    /// How long a cached list is served without fetching its first page again.
    static let maxAge: Duration = .seconds(60)

    /// The list's name.
    let key: String
    /// Where fetched pages are kept.
    let cache: DemoListCache
    /// Where pages come from.
    let origin: DemoListOrigin

    /// The manager shared by every list, ``manager``.
    var flowableDataStateManager: FlowableDataStateManager<String> { Self.manager }

    /// Reads the cached pages from ``cache``.
    func loadDataFromCache() async throws -> PagedData<[ListItem], Int>? {
        await cache.record(key: key)
    }

    /// Writes the pages to ``cache``, or deletes them when `newData` is `nil`.
    func saveDataToCache(newData: PagedData<[ListItem], Int>?) async throws {
        await cache.save(newData, key: key)
    }

    /// Fetches the first page, page 0, from ``origin``.
    func fetchDataFromOrigin() async throws -> PagedData<[ListItem], Int> {
        let page = try await origin.fetchFirstPage()
        return PagedData(data: page.items, nextCursor: page.nextPage)
    }

    /// Fetches page `nextCursor` from ``origin``.
    func fetchNextDataFromOrigin(nextCursor: Int, data: [ListItem]) async throws -> FetchedPage<[ListItem], Int> {
        let page = try await origin.fetchPage(number: nextCursor)
        return FetchedPage(data: page.items, cursor: page.nextPage)
    }

    /// Whether the cached list is older than ``maxAge``.
    func needRefresh(cachedData: [ListItem]) async -> Bool {
        guard let age = await cache.age(key: key) else { return true }
        return age > Self.maxAge
    }
}
