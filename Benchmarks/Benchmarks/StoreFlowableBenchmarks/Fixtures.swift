import StoreFlowable
import Synchronization

// The data, caches, origins and callbacks the benchmarks use. They are written the way the README and
// Docs/GettingStarted.md tell a user to write them, with the library's public API only.

/// The record every unpaged benchmark serves. `version` tells the rounds of the update benchmarks apart.
struct User: Sendable, Equatable {
    let id: Int
    var name: String
    var version: Int

    init(id: Int, version: Int = 0) {
        self.id = id
        name = "Ada"
        self.version = version
    }
}

/// How long a cached value is served without asking the origin again (the README's 5 minutes).
let maxAge: Duration = .seconds(300)

// MARK: Caches

/// The README's cache: an actor holding each user with the time it was saved. A cache hit through it
/// costs two actor calls, `user(_:)` from `loadDataFromCache()` and `isStale(_:)` from `needRefresh`.
actor ActorUserCache {
    private var entries: [Int: (user: User, savedAt: ContinuousClock.Instant)] = [:]

    init(preloaded users: [User] = []) {
        for user in users { entries[user.id] = (user, .now) }
    }

    func user(_ id: Int) -> User? { entries[id]?.user }

    func isStale(_ id: Int) -> Bool {
        guard let savedAt = entries[id]?.savedAt else { return true }
        return savedAt.duration(to: .now) > maxAge
    }

    func save(_ user: User?, for id: Int) { entries[id] = user.map { ($0, .now) } }
}

/// The same cache as a class guarded by a pthread mutex: the cheapest in-memory cache a user could
/// write. Its calls never suspend, so a cache hit through it has no actor hop at all.
final class LockedUserCache: Sendable {
    private let entries: Locked<[Int: (user: User, savedAt: ContinuousClock.Instant)]>

    init(preloaded users: [User] = []) {
        var entries: [Int: (user: User, savedAt: ContinuousClock.Instant)] = [:]
        for user in users { entries[user.id] = (user, .now) }
        self.entries = Locked(entries)
    }

    func user(_ id: Int) -> User? { entries.withLock { $0[id]?.user } }

    func isStale(_ id: Int) -> Bool {
        guard let savedAt = entries.withLock({ $0[id]?.savedAt }) else { return true }
        return savedAt.duration(to: .now) > maxAge
    }

    func save(_ user: User?, for id: Int) {
        let now = ContinuousClock.now
        entries.withLock { $0[id] = user.map { ($0, now) } }
    }
}

/// The baseline of a cache hit: an actor method returning a dictionary value (one actor round trip).
actor DictionaryActor {
    private var values: [Int: User]

    init(preloaded users: [User]) {
        values = Dictionary(uniqueKeysWithValues: users.map { ($0.id, $0) })
    }

    func value(for id: Int) -> User? { values[id] }
}

// MARK: Origins

/// An origin that answers at once and counts its calls, so a benchmark can check it never fetched.
final class CountingOrigin: Sendable {
    private let calls = Locked(0)

    var callCount: Int { calls.withLock { $0 } }

    func fetchUser(id: Int) async throws -> User {
        calls.withLock { $0 += 1 }
        return User(id: id)
    }
}

/// An origin whose fetch waits at a gate until the benchmark opens it, and counts its calls.
final class GatedOrigin: Sendable {
    let gate = Gate()
    private let calls = Locked(0)

    var callCount: Int { calls.withLock { $0 } }

    func fetchUser(id: Int) async throws -> User {
        calls.withLock { $0 += 1 }
        await gate.wait()
        return User(id: id, version: 1)
    }
}

// MARK: Callbacks

/// A user store over the README's actor cache.
struct ActorCacheCallback: StoreFlowableCallback {
    let key: Int
    let manager: FlowableDataStateManager<Int>
    let cache: ActorUserCache
    let origin: CountingOrigin

    var flowableDataStateManager: FlowableDataStateManager<Int> { manager }

    func loadDataFromCache() async throws -> User? { await cache.user(key) }
    func saveDataToCache(newData: User?) async throws { await cache.save(newData, for: key) }
    func fetchDataFromOrigin() async throws -> User { try await origin.fetchUser(id: key) }
    func needRefresh(cachedData: User) async -> Bool { await cache.isStale(key) }
}

/// A user store over the lock-guarded cache.
struct LockedCacheCallback: StoreFlowableCallback {
    let key: Int
    let manager: FlowableDataStateManager<Int>
    let cache: LockedUserCache
    let origin: CountingOrigin

    var flowableDataStateManager: FlowableDataStateManager<Int> { manager }

    func loadDataFromCache() async throws -> User? { cache.user(key) }
    func saveDataToCache(newData: User?) async throws { cache.save(newData, for: key) }
    func fetchDataFromOrigin() async throws -> User { try await origin.fetchUser(id: key) }
    func needRefresh(cachedData: User) async -> Bool { cache.isStale(key) }
}

/// A user store over the README's actor cache whose origin waits at a gate.
struct GatedOriginCallback: StoreFlowableCallback {
    let key: Int
    let manager: FlowableDataStateManager<Int>
    let cache: ActorUserCache
    let origin: GatedOrigin

    var flowableDataStateManager: FlowableDataStateManager<Int> { manager }

    func loadDataFromCache() async throws -> User? { await cache.user(key) }
    func saveDataToCache(newData: User?) async throws { await cache.save(newData, for: key) }
    func fetchDataFromOrigin() async throws -> User { try await origin.fetchUser(id: key) }
    func needRefresh(cachedData: User) async -> Bool { await cache.isStale(key) }
}

// MARK: Paging

/// One item of the paged feed.
struct Article: Sendable, Equatable {
    let id: Int
    var title: String
}

/// Docs/Pagination.md's cache: an actor holding each feed's record with the time it was saved.
actor FeedCache {
    private var entries: [String: (record: PagedData<[Article], Int>, savedAt: ContinuousClock.Instant)] = [:]

    func record(for key: String) -> PagedData<[Article], Int>? { entries[key]?.record }

    func isStale(_ key: String) -> Bool {
        guard let savedAt = entries[key]?.savedAt else { return true }
        return savedAt.duration(to: .now) > maxAge
    }

    func save(_ record: PagedData<[Article], Int>?, for key: String) {
        entries[key] = record.map { ($0, .now) }
    }
}

/// An origin serving pages of `pageSize` articles at once, with page numbers as cursors.
struct FeedOrigin: Sendable {
    let pageSize: Int

    func page(_ number: Int) -> [Article] {
        (0..<pageSize).map { Article(id: number * pageSize + $0, title: "Article") }
    }

    func fetchFirstPage() async throws -> PagedData<[Article], Int> {
        PagedData(data: page(0), nextCursor: 1)
    }

    func fetchPage(_ number: Int) async throws -> FetchedPage<[Article], Int> {
        FetchedPage(data: page(number), cursor: number + 1)
    }
}

/// The paged feed's callback, as in Docs/Pagination.md; it merges with the default (array append).
struct FeedCallback: PaginationStoreFlowableCallback {
    let key: String
    let manager: FlowableDataStateManager<String>
    let cache: FeedCache
    let origin: FeedOrigin

    var flowableDataStateManager: FlowableDataStateManager<String> { manager }

    func loadDataFromCache() async throws -> PagedData<[Article], Int>? { await cache.record(for: key) }

    func saveDataToCache(newData: PagedData<[Article], Int>?) async throws {
        await cache.save(newData, for: key)
    }

    func fetchDataFromOrigin() async throws -> PagedData<[Article], Int> { try await origin.fetchFirstPage() }

    func fetchNextDataFromOrigin(nextCursor: Int, data: [Article]) async throws -> FetchedPage<[Article], Int> {
        try await origin.fetchPage(nextCursor)
    }

    func needRefresh(cachedData: [Article]) async -> Bool { await cache.isStale(key) }
}

/// An events observer that only counts the events it receives (one atomic add per event).
final class CountingObserver: StoreEventObserver {
    private let events = Atomic<Int>(0)

    func observe(_ event: StoreEvent) {
        events.wrappingAdd(1, ordering: .relaxed)
    }

    var count: Int { events.load(ordering: .relaxed) }
}
