import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import Testing

/// Reads and writes: entries keep their timestamp to the nanosecond and their mark, writes replace,
/// removals and invalidations do what they say.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheTests {
    @Test func anEntryReadsBackWithItsTimestampToTheNanosecondAndItsMark() async throws {
        try await withClient { client in
            let cache = try await makeCache(client)
            // Not a whole number of seconds, milliseconds or microseconds.
            let storedAt = CacheTime(nanosecondsSince1970: 1_700_000_000_123_456_789)
            try await cache.setEntry(CacheEntry(value: "one", storedAt: storedAt), forKey: 1)
            try await cache.setEntry(CacheEntry(value: "two", storedAt: storedAt, isInvalidated: true), forKey: 2)
            #expect(try await cache.entry(forKey: 1) == CacheEntry(value: "one", storedAt: storedAt))
            #expect(
                try await cache.entry(forKey: 2) == CacheEntry(value: "two", storedAt: storedAt, isInvalidated: true))
            #expect(try await cache.entry(forKey: 3) == nil)
            let stored = try await scalar(
                client, "SELECT stored_at FROM \(unescaped: "storeflowable_cache_" + cache.name) WHERE key = '1'")
            #expect(stored == 1_700_000_000_123_456_789)
        }
    }

    @Test func aWriteReplacesTheEntryAndItsMark() async throws {
        try await withClient { client in
            let cache = try await makeCache(client)
            try await cache.setEntry(
                CacheEntry(value: "old", storedAt: CacheTime(nanosecondsSince1970: 1), isInvalidated: true), forKey: 1)
            try await cache.setEntry(CacheEntry(value: "new", storedAt: CacheTime(nanosecondsSince1970: 2)), forKey: 1)
            #expect(
                try await cache.entry(forKey: 1)
                    == CacheEntry(value: "new", storedAt: CacheTime(nanosecondsSince1970: 2)))
            let rows = try await scalar(
                client, "SELECT count(*) FROM \(unescaped: "storeflowable_cache_" + cache.name)")
            #expect(rows == 1)
        }
    }

    @Test func removeEntryRemovesOneKeyAndRemoveAllEntriesEveryKeyOfThisCacheOnly() async throws {
        try await withClient { client in
            let cache = try await makeCache(client)
            let other = try await makeCache(client)
            let time = CacheTime(nanosecondsSince1970: 5)
            for key in 1...3 { try await cache.setEntry(CacheEntry(value: "v\(key)", storedAt: time), forKey: key) }
            try await other.setEntry(CacheEntry(value: "other", storedAt: time), forKey: 1)
            try await cache.removeEntry(forKey: 2)
            try await cache.removeEntry(forKey: 9)  // absent: nothing happens
            #expect(try await cache.entry(forKey: 1)?.value == "v1")
            #expect(try await cache.entry(forKey: 2) == nil)
            #expect(try await cache.entry(forKey: 3)?.value == "v3")
            try await cache.removeAllEntries()
            #expect(try await cache.entry(forKey: 1) == nil)
            #expect(try await cache.entry(forKey: 3) == nil)
            #expect(try await other.entry(forKey: 1)?.value == "other")
        }
    }

    @Test func invalidateEntryKeepsTheValueAndTheTimestamp() async throws {
        try await withClient { client in
            let cache = try await makeCache(client)
            let storedAt = CacheTime(nanosecondsSince1970: 1_700_000_000_000_000_001)
            try await cache.setEntry(CacheEntry(value: "v", storedAt: storedAt), forKey: 1)
            try await cache.setEntry(CacheEntry(value: "w", storedAt: storedAt), forKey: 2)
            try await cache.invalidateEntry(forKey: 1)
            try await cache.invalidateEntry(forKey: 9)  // absent: nothing happens
            #expect(try await cache.entry(forKey: 1) == CacheEntry(value: "v", storedAt: storedAt, isInvalidated: true))
            #expect(try await cache.entry(forKey: 2) == CacheEntry(value: "w", storedAt: storedAt))
            #expect(try await cache.entry(forKey: 9) == nil)
        }
    }

    @Test func invalidateEntriesMarksOnlyTheChosenKeys() async throws {
        try await withClient { client in
            let cache = try await makeCache(client)
            let time = CacheTime(nanosecondsSince1970: 10)
            for key in 1...6 { try await cache.setEntry(CacheEntry(value: "v\(key)", storedAt: time), forKey: key) }
            try await cache.invalidateEntries(where: { $0.isMultiple(of: 2) })
            for key in 1...6 {
                let entry = try await cache.entry(forKey: key)
                #expect(entry == CacheEntry(value: "v\(key)", storedAt: time, isInvalidated: key.isMultiple(of: 2)))
            }
        }
    }

    @Test func invalidateEntriesDoesNotMarkAnEntryWrittenWhileThePredicateRan() async throws {
        try await withClient { client in
            let cache = try await makeCache(client)
            let old = CacheTime(nanosecondsSince1970: 10)
            let new = CacheTime(nanosecondsSince1970: 20)
            for key in 1...3 { try await cache.setEntry(CacheEntry(value: "old", storedAt: old), forKey: key) }
            let rewrite = RewriteOnce(cache: cache, key: 2, entry: CacheEntry(value: "new", storedAt: new))
            // Keys 1 and 2 are chosen; while the predicate runs, key 2 is written again by another task.
            // The rewrite would wait for ever (and the predicate give up) if the cache held a lock.
            try await cache.invalidateEntries(where: { key in
                rewrite.runBlocking()
                return key <= 2
            })
            #expect(rewrite.succeeded)
            #expect(try await cache.entry(forKey: 1) == CacheEntry(value: "old", storedAt: old, isInvalidated: true))
            #expect(try await cache.entry(forKey: 2) == CacheEntry(value: "new", storedAt: new))
            #expect(try await cache.entry(forKey: 3) == CacheEntry(value: "old", storedAt: old))
        }
    }
}
