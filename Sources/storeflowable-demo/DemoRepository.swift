import StoreFlowable

/// The repository layer for users: a `KeyedStore` over a cache, fetching from a ``DemoOrigin``.
///
/// A program keeps one `KeyedStore` per kind of data for its whole life: it holds the state manager
/// that gives each user one fetch for all its callers. The tour builds one per part instead, over a
/// cache and an origin of the part's own, so that the parts do not see each other's users.
enum DemoRepository {
    /// How the parts other than `--disk` and `--freshness` serve cached users: fresh for a minute,
    /// which none of them lasts.
    static let policy = FreshnessPolicy(freshFor: .seconds(60))

    /// The stores of every user over `cache`, fetched from `origin`.
    static func users<Cache: KeyedCache<Int, User>>(cache: Cache, origin: DemoOrigin) -> KeyedStore<Cache> {
        KeyedStore(cache: cache) { id in try await origin.fetchUser(id: id) }
    }

    /// The store of user `id` over a new memory cache with ``policy``, fetched from `origin`.
    static func store(id: Int, origin: DemoOrigin) -> AnyStoreFlowable<User> {
        AnyStoreFlowable(users(cache: MemoryCache<Int, User>(policy: policy), origin: origin)[id])
    }
}
