import Foundation
import StoreFlowable
import StoreFlowableSQLite
import StoreFlowableTesting
import Testing

/// Stores built on an `SQLiteCache`: the value one instance's store cached is a hit for the next (a
/// restart, or another process on the file), ages and invalidations survive with it, and a database
/// that fails is a typed error while the store keeps serving from the origin.
@Suite("SQLiteCache behind a store", .timeLimit(.minutes(1)))
struct SQLiteCacheStoreTests {
    @Test func aRestartedStoreServesTheCachedValueWithoutFetchingUntilItIsStale() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let clock = ManualCacheClock()
            let policy = FreshnessPolicy(freshFor: .seconds(60))
            let origin = ScriptedOrigin<String>(otherwise: { .success("fetched-\($0)") })
            let firstCache = try await SQLiteCache<Int, String>.open(
                name: "users", path: path, policy: policy, clock: clock)
            let first = KeyedStore(cache: firstCache) { _ in try await origin.fetch() }
            #expect(try await first[42].requireData() == "fetched-1")
            await firstCache.close()
            // A new cache instance and store over the same file: what the next process sees.
            let secondCache = try await SQLiteCache<Int, String>.open(
                name: "users", path: path, policy: policy, clock: clock)
            let second = KeyedStore(cache: secondCache) { _ in try await origin.fetch() }
            #expect(try await second[42].requireData() == "fetched-1")
            #expect(origin.callCount == 1)
            clock.advance(by: .milliseconds(59_999))
            #expect(try await second[42].requireData() == "fetched-1")
            clock.advance(by: .milliseconds(1))
            #expect(try await second[42].requireData() == "fetched-2")
            await secondCache.close()
        }
    }

    @Test func anInvalidationThroughOneInstanceMakesTheOtherFetch() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let origin = ScriptedOrigin<String>(otherwise: { .success("fetched-\($0)") })
            let cacheA = try await SQLiteCache<Int, String>.open(name: "users", path: path)
            let cacheB = try await SQLiteCache<Int, String>.open(name: "users", path: path)
            let storeA = KeyedStore(cache: cacheA) { _ in try await origin.fetch() }
            let storeB = KeyedStore(cache: cacheB) { _ in try await origin.fetch() }
            #expect(try await storeA[1].requireData() == "fetched-1")
            #expect(try await storeB[1].requireData() == "fetched-1")
            try await storeA.invalidate { $0 == 1 }
            #expect(try await storeB[1].requireData() == "fetched-2")
            #expect(try await storeA[1].requireData() == "fetched-2")
            #expect(origin.callCount == 2)
            await cacheA.close()
            await cacheB.close()
        }
    }

    @Test func aClosedDatabaseIsATypedErrorAndTheStoreStillAnswersFromTheOrigin() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, String>.open(name: "users", path: databasePath(in: folder))
            let origin = ScriptedOrigin<String>(otherwise: { .success("fetched-\($0)") })
            let events = StoreEventRecorder()
            let store = KeyedStore(cache: cache, manager: FlowableDataStateManager(observer: events)) { _ in
                try await origin.fetch()
            }
            await cache.close()
            await #expect {
                try await store[7].requireData()
            } throws: { error in
                guard case .cacheWriteFailed(let underlying) = error as? StoreFlowableError else { return false }
                guard case SQLiteCacheError.closed = underlying else { return false }
                return true
            }
            #expect(origin.callCount == 1)
            #expect(events.events.contains { if case .cacheReadFailed = $0.kind { true } else { false } })
        }
    }
}
