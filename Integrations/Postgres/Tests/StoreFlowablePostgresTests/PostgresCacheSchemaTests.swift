import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import Testing

/// The table is created only by the explicit migration, which is idempotent and safe to run
/// concurrently; a cache refuses to open on a missing or foreign table.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheSchemaTests {
    @Test func migrateIsIdempotentAndKeepsTheRows() async throws {
        try await withClient { client in
            let name = uniqueName()
            let cache = try await makeCache(client, name: name)
            try await cache.setEntry(CacheEntry(value: "kept", storedAt: CacheTime(nanosecondsSince1970: 7)), forKey: 1)
            try await PostgresCacheSchema.migrate(name: name, client: client)
            try await PostgresCacheSchema.migrate(name: name, client: client)
            #expect(try await cache.entry(forKey: 1)?.value == "kept")
            let rows = try await scalar(
                client, "SELECT count(*) FROM storeflowable_schema WHERE cache = \(name)")
            #expect(rows == 1)
        }
    }

    @Test func tenConcurrentMigrationsOfOneNameAllSucceed() async throws {
        // Each migration runs on a connection of its own (a new client each), so that the DDL really
        // races: without the advisory lock, concurrent CREATE TABLE IF NOT EXISTS fail on the catalog's
        // unique index.
        let name = uniqueName()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    try await withClient { client in
                        try await PostgresCacheSchema.migrate(name: name, client: client)
                    }
                }
            }
            try await group.waitForAll()
        }
        try await withClient { client in
            let cache = try await PostgresCache<Int, String>(name: name, client: client)
            try await cache.setEntry(CacheEntry(value: "v", storedAt: CacheTime(nanosecondsSince1970: 1)), forKey: 1)
            #expect(try await cache.entry(forKey: 1)?.value == "v")
        }
    }

    @Test func openingWithoutMigratingIsATypedError() async throws {
        try await withClient { client in
            let name = uniqueName()
            await #expect {
                _ = try await PostgresCache<Int, String>(name: name, client: client)
            } throws: { error in
                guard case .notMigrated(let missing) = error as? PostgresCacheError else { return false }
                return missing == name
            }
            let tables = try await scalar(
                client, "SELECT count(*) FROM pg_tables WHERE tablename = \("storeflowable_cache_" + name)")
            #expect(tables == 0)
        }
    }

    @Test func aRecordedLayoutOfAnotherVersionIsATypedError() async throws {
        try await withClient { client in
            let name = uniqueName()
            try await PostgresCacheSchema.migrate(name: name, client: client)
            try await execute(client, "UPDATE storeflowable_schema SET version = 99 WHERE cache = \(name)")
            await #expect {
                _ = try await PostgresCache<Int, String>(name: name, client: client)
            } throws: { error in
                guard case .schemaMismatch(let found, let expected) = error as? PostgresCacheError else { return false }
                return found == 99 && expected == PostgresCacheSchema.layoutVersion
            }
            // Migrating does not overwrite another layout either.
            await #expect {
                try await PostgresCacheSchema.migrate(name: name, client: client)
            } throws: { error in
                guard case .schemaMismatch(found: 99, _) = error as? PostgresCacheError else { return false }
                return true
            }
        }
    }

    @Test(arguments: ["", "Users", "1users", "users-1", "users;drop", "a" + String(repeating: "b", count: 43)])
    func invalidNamesAreTypedErrors(name: String) async throws {
        try await withClient { client in
            await #expect(throws: PostgresCacheError.self) {
                try await PostgresCacheSchema.migrate(name: name, client: client)
            }
            await #expect {
                _ = try await PostgresCache<Int, String>(name: name, client: client)
            } throws: { error in
                guard case .invalidName(name)? = error as? PostgresCacheError else { return false }
                return true
            }
        }
    }

    @Test func theLongestValidNameMakesATableOfExactlyThatName() async throws {
        try await withClient { client in
            let base = "l" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let name = base + String(repeating: "x", count: 43 - base.count)
            #expect(name.count == 43)
            _ = try await makeCache(client, name: name)
            let tables = try await scalar(
                client, "SELECT count(*) FROM pg_tables WHERE tablename = \("storeflowable_cache_" + name)")
            #expect(tables == 1)
        }
    }
}
