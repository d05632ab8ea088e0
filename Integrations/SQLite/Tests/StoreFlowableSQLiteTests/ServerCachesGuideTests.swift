import Foundation
import StoreFlowable
import StoreFlowableSQLite
import Testing

// The example of Docs/ServerCaches.md, section 1, compiled and run here (the guide shows this file).

/// A user as the origin returns it.
struct User: Codable, Sendable, Equatable {
    var id: Int
    var name: String
}

/// The repository of a server that keeps users in an SQLite file: fresh for five minutes, then served
/// while a fetch refreshes them for another minute.
struct UserRepository: Sendable {
    let cache: SQLiteCache<Int, User>
    let users: KeyedStore<SQLiteCache<Int, User>>

    init(databasePath: String, fetch: @escaping @Sendable (Int) async throws -> User) async throws {
        cache = try await SQLiteCache<Int, User>.open(
            name: "users", path: databasePath,
            policy: FreshnessPolicy(freshFor: .seconds(300), staleWhileRevalidate: .seconds(60)))
        users = KeyedStore(cache: cache, fetch: fetch)
    }

    func user(_ id: Int) async throws -> User {
        try await users[id].requireData()
    }

    func close() async {
        await cache.close()
    }
}

@Test(.timeLimit(.minutes(1)))
func theGuidesRepositoryServesFromTheFileAfterARestart() async throws {
    try await withTemporaryFolder { folder in
        let path = folder + "/cache.sqlite"
        let first = try await UserRepository(databasePath: path) { id in User(id: id, name: "Ada") }
        #expect(try await first.user(1) == User(id: 1, name: "Ada"))
        await first.close()
        let restarted = try await UserRepository(databasePath: path) { _ in throw CancellationError() }
        #expect(try await restarted.user(1) == User(id: 1, name: "Ada"))
        await restarted.close()
    }
}
