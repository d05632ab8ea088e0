import Foundation
import SQLiteNIO
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

@testable import StoreFlowableSQLite

@Suite("SQLiteCache", .timeLimit(.minutes(1)))
struct SQLiteCacheTests {
    @Test func anEntryComesBackWithItsTimeToTheNanosecondAndItsMark() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: databasePath(in: folder))
            #expect(try await cache.entry(forKey: 1) == nil)
            try await cache.setEntry(CacheEntry(value: Profile(id: 1, name: "Ada"), storedAt: preciseTime), forKey: 1)
            try await cache.setEntry(
                CacheEntry(value: Profile(id: 2, name: "Bo"), storedAt: preciseTime, isInvalidated: true), forKey: 2)
            #expect(
                try await cache.entry(forKey: 1)
                    == CacheEntry(value: Profile(id: 1, name: "Ada"), storedAt: preciseTime))
            #expect(try await cache.entry(forKey: 2)?.isInvalidated == true)
            await cache.close()
        }
    }

    @Test func aWriteReplacesTheEntryAndItsMark() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: databasePath(in: folder))
            try await cache.setEntry(CacheEntry(value: Profile(id: 1, name: "Ada"), storedAt: preciseTime), forKey: 1)
            try await cache.invalidateEntry(forKey: 1)
            let later = preciseTime.advanced(by: .seconds(1))
            try await cache.setEntry(CacheEntry(value: Profile(id: 1, name: "Ada L."), storedAt: later), forKey: 1)
            #expect(
                try await cache.entry(forKey: 1) == CacheEntry(value: Profile(id: 1, name: "Ada L."), storedAt: later))
            await cache.close()
        }
    }

    @Test func invalidatingKeepsTheValueAndItsTime() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: databasePath(in: folder))
            try await cache.setEntry(CacheEntry(value: Profile(id: 1, name: "Ada"), storedAt: preciseTime), forKey: 1)
            try await cache.invalidateEntry(forKey: 1)
            try await cache.invalidateEntry(forKey: 99)
            #expect(
                try await cache.entry(forKey: 1)
                    == CacheEntry(value: Profile(id: 1, name: "Ada"), storedAt: preciseTime, isInvalidated: true))
            #expect(try await cache.entry(forKey: 99) == nil)
            await cache.close()
        }
    }

    @Test func removingTakesOneKeyAndRemovingAllLeavesOtherCachesOfTheFile() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let profiles = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path)
            let names = try await SQLiteCache<String, String>.open(name: "names", path: path)
            for key in 1...3 {
                try await profiles.setEntry(
                    CacheEntry(value: Profile(id: key, name: "P"), storedAt: preciseTime), forKey: key)
            }
            try await names.setEntry(CacheEntry(value: "Ada", storedAt: preciseTime), forKey: "a")
            try await profiles.removeEntry(forKey: 2)
            #expect(try await profiles.entry(forKey: 2) == nil)
            #expect(try await profiles.entry(forKey: 3) != nil)
            try await profiles.removeAllEntries()
            #expect(try await profiles.entry(forKey: 1) == nil)
            #expect(try await profiles.entry(forKey: 3) == nil)
            #expect(try await names.entry(forKey: "a")?.value == "Ada")
            await profiles.close()
            await names.close()
        }
    }

    @Test func invalidatingByPredicateMarksOnlyTheChosenKeys() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: databasePath(in: folder))
            for key in 1...6 {
                try await cache.setEntry(
                    CacheEntry(value: Profile(id: key, name: "P"), storedAt: preciseTime), forKey: key)
            }
            try await cache.invalidateEntries { $0 % 2 == 0 }
            for key in 1...6 {
                #expect(try await cache.entry(forKey: key)?.isInvalidated == (key % 2 == 0), "key \(key)")
                #expect(try await cache.entry(forKey: key)?.storedAt == preciseTime)
            }
            await cache.close()
        }
    }

    /// The predicate runs after the keys were listed: a write made then (here by another connection,
    /// as another process would) is newer than the decision and is not marked.
    @Test func invalidatingByPredicateLeavesAnEntryRewrittenMeanwhile() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let cache = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path)
            let other = try await SyncConnection(path: path)
            for key in 1...2 {
                try await cache.setEntry(
                    CacheEntry(value: Profile(id: key, name: "old"), storedAt: preciseTime), forKey: key)
            }
            // The rewrite is made from inside the predicate, so that it lands after the listing (a task
            // started before `invalidateEntries` could finish before the listing, under load, and then
            // be marked rightly); the connection blocks on a thread pool of its own.
            try await cache.invalidateEntries { key in
                if key == 1 {
                    #expect(throws: Never.self) {
                        let key = try cache.coder.encodeKey(1)
                        let value = try cache.coder.encodeValue(Profile(id: 1, name: "new"))
                        try other.run(
                            cache.table.upsert,
                            [
                                (key.sqliteData ?? .null), (value.sqliteData ?? .null),
                                .integer(Int(preciseTime.nanosecondsSince1970)),
                                .integer(0), .integer(1), .integer(key.count + value.count),
                            ])
                    }
                }
                return true
            }
            #expect(
                try await cache.entry(forKey: 1)
                    == CacheEntry(value: Profile(id: 1, name: "new"), storedAt: preciseTime))
            #expect(try await cache.entry(forKey: 2)?.isInvalidated == true)
            await cache.close()
            try await other.close()
        }
    }

    @Test func anEntryPastItsLifetimeIsAMissAndIsDeleted() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let events = SQLiteEventLog()
            let cache = try await SQLiteCache<Int, Profile>.open(
                name: "profiles", path: databasePath(in: folder),
                policy: FreshnessPolicy(freshFor: .milliseconds(300), maxAge: .milliseconds(800)), clock: clock,
                events: events.handler)
            try await cache.setEntry(CacheEntry(value: Profile(id: 1, name: "Ada"), storedAt: clock.now), forKey: 1)
            clock.advance(by: .milliseconds(799))
            #expect(try await cache.entry(forKey: 1) != nil)
            clock.advance(by: .milliseconds(1))
            #expect(try await cache.entry(forKey: 1) == nil)
            #expect(events.all == [.removedExpiredEntry(table: "storeflowable_cache_profiles", key: "1")])
            clock.advance(by: .seconds(-10))
            #expect(try await cache.entry(forKey: 1) == nil, "deleted, not only hidden")
            await cache.close()
        }
    }

    @Test func anEntryOfAnotherValueFormatIsAMissAndIsDeleted() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let old = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path)
            try await old.setEntry(CacheEntry(value: Profile(id: 1, name: "Ada"), storedAt: preciseTime), forKey: 1)
            await old.close()
            let events = SQLiteEventLog()
            let new = try await SQLiteCache<Int, Profile>.open(
                name: "profiles", path: path, valueFormat: 2, events: events.handler)
            #expect(try await new.entry(forKey: 1) == nil)
            #expect(
                events.all == [
                    .removedUnreadableEntry(
                        table: "storeflowable_cache_profiles", key: "1", problem: .otherValueFormat(found: 1))
                ])
            try await withRawConnection(to: path) { connection in
                let rows = try await connection.query("SELECT count(*) AS n FROM storeflowable_cache_profiles")
                #expect(rows.first?.column("n")?.integer == 0)
            }
            await new.close()
        }
    }

    @Test func damagedRowsAreMissesReportedAndDeleted() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let events = SQLiteEventLog()
            let cache = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path, events: events.handler)
            for key in 1...2 {
                try await cache.setEntry(
                    CacheEntry(value: Profile(id: key, name: "P"), storedAt: preciseTime), forKey: key)
            }
            try await withRawConnection(to: path) { connection in
                _ = try await connection.query(
                    "UPDATE storeflowable_cache_profiles SET value = x'00ff7b' WHERE key = CAST('1' AS BLOB)")
                _ = try await connection.query(
                    "UPDATE storeflowable_cache_profiles SET stored_at = 'soon' WHERE key = CAST('2' AS BLOB)")
            }
            #expect(try await cache.entry(forKey: 1) == nil)
            #expect(try await cache.entry(forKey: 2) == nil)
            let problems = events.all.compactMap { event -> SQLiteCacheEntryProblem? in
                guard case .removedUnreadableEntry(_, _, let problem) = event else { return nil }
                return problem
            }
            #expect(problems.count == 2)
            if case .undecodableValue = problems.first {
            } else {
                Issue.record("expected an undecodable value: \(problems)")
            }
            #expect(problems.last == .malformedRow)
            try await withRawConnection(to: path) { connection in
                let rows = try await connection.query("SELECT count(*) AS n FROM storeflowable_cache_profiles")
                #expect(rows.first?.column("n")?.integer == 0)
            }
            await cache.close()
        }
    }

    @Test(arguments: ["", "Profiles", "1st", "a-b", "a b", "é", String(repeating: "a", count: 49)])
    func aNameThatIsNotALowercaseIdentifierIsRefused(name: String) async throws {
        try await withTemporaryFolder { folder in
            await #expect {
                _ = try await SQLiteCache<Int, Profile>.open(name: name, path: databasePath(in: folder))
            } throws: { error in
                guard case SQLiteCacheError.invalidName(name) = error else { return false }
                return true
            }
        }
    }

    @Test func aNameOf48CharactersIsAccepted() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, Int>.open(
                name: "a" + String(repeating: "_9", count: 23) + "z", path: databasePath(in: folder))
            try await cache.setEntry(CacheEntry(value: 1, storedAt: preciseTime), forKey: 1)
            #expect(try await cache.entry(forKey: 1)?.value == 1)
            await cache.close()
        }
    }

    @Test func aTableOfAnotherLayoutVersionIsRefusedAtOpen() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path).close()
            try await withRawConnection(to: path) { connection in
                _ = try await connection.query(
                    "UPDATE storeflowable_schema SET version = 2 WHERE cache = 'storeflowable_cache_profiles'")
            }
            await #expect {
                _ = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path)
            } throws: { error in
                guard
                    case SQLiteCacheError.schemaMismatch("storeflowable_cache_profiles", found: 2, expected: 1) = error
                else { return false }
                return true
            }
        }
    }

    @Test func aTableTheCacheDidNotMakeIsLeftAlone() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            try await withRawConnection(to: path) { connection in
                _ = try await connection.query("CREATE TABLE storeflowable_cache_profiles (id INTEGER)")
            }
            await #expect {
                _ = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path)
            } throws: { error in
                guard case SQLiteCacheError.unexpectedTable("storeflowable_cache_profiles") = error else {
                    return false
                }
                return true
            }
            try await withRawConnection(to: path) { connection in
                let columns = try await connection.query("PRAGMA table_info(storeflowable_cache_profiles)")
                #expect(columns.compactMap { $0.column("name")?.string } == ["id"])
            }
        }
    }

    @Test func aFileThatIsNotADatabaseIsATypedError() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            try Data(repeating: 0x41, count: 4096).write(to: URL(filePath: path))
            await #expect {
                _ = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path)
            } throws: { error in
                guard case SQLiteCacheError.databaseFailed = error else { return false }
                return true
            }
        }
    }

    @Test func aFolderThatDoesNotExistIsATypedError() async throws {
        try await withTemporaryFolder { folder in
            await #expect {
                _ = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: folder + "/missing/cache.sqlite")
            } throws: { error in
                guard case SQLiteCacheError.databaseFailed = error else { return false }
                return true
            }
        }
    }

    @Test func theOldestEntriesAreEvictedFirstAndNeverTheOneJustWritten() async throws {
        try await withTemporaryFolder { folder in
            let events = SQLiteEventLog()
            // Each entry: key "n" (1 byte) + a 98-character JSON string = 101 bytes... measured below.
            let cache = try await SQLiteCache<Int, String>.open(
                name: "texts", path: databasePath(in: folder), sizeLimit: 350, events: events.handler)
            let text = String(repeating: "x", count: 98)  // 100 bytes as JSON, 101 with the key
            for key in 1...3 {
                try await cache.setEntry(CacheEntry(value: text, storedAt: preciseTime), forKey: key)
            }
            #expect(events.all.isEmpty)
            try await cache.setEntry(CacheEntry(value: text, storedAt: preciseTime), forKey: 4)
            #expect(events.all == [.evicted(table: "storeflowable_cache_texts", count: 1, bytes: 101)])
            #expect(try await cache.entry(forKey: 1) == nil)
            // Rewriting key 2 makes it the newest: 3 is now the oldest.
            try await cache.setEntry(CacheEntry(value: text, storedAt: preciseTime), forKey: 2)
            try await cache.setEntry(CacheEntry(value: text, storedAt: preciseTime), forKey: 5)
            #expect(try await cache.entry(forKey: 3) == nil)
            for key in [2, 4, 5] { #expect(try await cache.entry(forKey: key) != nil, "key \(key)") }
            // A large entry takes the room of all others, never itself.
            let large = String(repeating: "y", count: 300)
            try await cache.setEntry(CacheEntry(value: large, storedAt: preciseTime), forKey: 6)
            #expect(try await cache.entry(forKey: 6)?.value == large)
            for key in [2, 4, 5] { #expect(try await cache.entry(forKey: key) == nil, "key \(key)") }
            await cache.close()
        }
    }

    @Test func anEntryLargerThanTheLimitIsRefusedAndRemovesTheOldOne() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, String>.open(
                name: "texts", path: databasePath(in: folder), sizeLimit: 50)
            try await cache.setEntry(CacheEntry(value: "short", storedAt: preciseTime), forKey: 1)
            await #expect {
                try await cache.setEntry(
                    CacheEntry(value: String(repeating: "z", count: 60), storedAt: preciseTime), forKey: 1)
            } throws: { error in
                guard case SQLiteCacheError.entryTooLarge(bytes: 63, sizeLimit: 50) = error else { return false }
                return true
            }
            #expect(try await cache.entry(forKey: 1) == nil)
            await cache.close()
        }
    }

    @Test func aClosedCacheThrowsClosed() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, Int>.open(name: "numbers", path: databasePath(in: folder))
            await cache.close()
            await cache.close()
            await #expect {
                _ = try await cache.entry(forKey: 1)
            } throws: { error in
                guard case SQLiteCacheError.closed = error else { return false }
                return true
            }
            await #expect {
                try await cache.setEntry(CacheEntry(value: 1, storedAt: preciseTime), forKey: 1)
            } throws: { error in
                guard case SQLiteCacheError.closed = error else { return false }
                return true
            }
        }
    }

    /// 4 instances on one file (as 4 processes would be), 200 writers and 200 readers of one key at
    /// once: every read is a whole value someone wrote, and the last one is whole too.
    @Test func concurrentWritersAndReadersOfOneKeyOnlySeeWholeValues() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            var caches: [SQLiteCache<Int, [Int]>] = []
            for _ in 0..<4 { caches.append(try await SQLiteCache<Int, [Int]>.open(name: "lists", path: path)) }
            let instances = caches
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<400 {
                    let cache = instances[index % 4]
                    group.addTask {
                        if index % 2 == 0 {
                            let value = [Int](repeating: index, count: 64)
                            try await cache.setEntry(CacheEntry(value: value, storedAt: preciseTime), forKey: 1)
                        } else if let value = try await cache.entry(forKey: 1)?.value {
                            #expect(value.count == 64 && Set(value).count == 1 && value[0] % 2 == 0)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let last = try #require(try await instances[0].entry(forKey: 1)?.value)
            #expect(last.count == 64 && Set(last).count == 1)
            for cache in instances { await cache.close() }
        }
    }

    @Test func aSecondInstanceSeesTheFirstOnesWritesAndItsInvalidations() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let first = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path)
            let second = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path)
            try await first.setEntry(CacheEntry(value: Profile(id: 1, name: "Ada"), storedAt: preciseTime), forKey: 1)
            #expect(try await second.entry(forKey: 1)?.value.name == "Ada")
            try await first.invalidateEntry(forKey: 1)
            #expect(try await second.entry(forKey: 1)?.isInvalidated == true)
            await first.close()
            await second.close()
        }
    }
}
