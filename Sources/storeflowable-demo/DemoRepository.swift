import StoreFlowable

/// The demo's local cache: users kept in memory, each with the time it was saved.
actor DemoCache {
    private let clock = ContinuousClock()
    private var entries: [Int: (user: User, savedAt: ContinuousClock.Instant)] = [:]

    /// The cached user `id`, or `nil` when it is not cached.
    func user(id: Int) -> User? {
        entries[id]?.user
    }

    /// How long ago user `id` was saved, or `nil` when it is not cached.
    func age(id: Int) -> Duration? {
        entries[id].map { entry in entry.savedAt.duration(to: clock.now) }
    }

    /// Saves `user` as user `id`, or deletes user `id` when `user` is `nil`.
    func save(_ user: User?, id: Int) {
        entries[id] = user.map { user in (user, clock.now) }
    }
}

/// The repository layer for users: tells a store how to read and write the cache, how to fetch from
/// the origin, and when a cached user is too old to serve.
///
/// One value describes one user; `UserRepository(key: 42, …).create()` is the store for user 42.
struct UserRepository: StoreFlowableCallback {
    /// One manager for every user. Sharing it is what makes all stores of the same user share one
    /// state and one fetch.
    static let manager = FlowableDataStateManager<Int>()

    /// How long a cached user is served without asking the origin again.
    static let maxAge: Duration = .seconds(60)

    /// The user id.
    let key: Int
    /// Where fetched users are kept.
    let cache: DemoCache
    /// Where users come from.
    let origin: DemoOrigin

    var flowableDataStateManager: FlowableDataStateManager<Int> { Self.manager }

    func loadDataFromCache() async throws -> User? {
        await cache.user(id: key)
    }

    func saveDataToCache(newData: User?) async throws {
        await cache.save(newData, id: key)
    }

    func fetchDataFromOrigin() async throws -> User {
        try await origin.fetchUser(id: key)
    }

    func needRefresh(cachedData: User) async -> Bool {
        guard let age = await cache.age(id: key) else { return true }
        return age > Self.maxAge
    }
}
