import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import StoreFlowableTesting
import Testing

/// Rows a read must not serve — past their lifetime, of another value format, with bytes the coder
/// cannot decode — are misses, deleted and reported.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheDamageTests {
    @Test func anEntryPastItsLifetimeIsDeletedAndReadAsAMiss() async throws {
        try await withClient { client in
            let clock = ManualCacheClock()
            let log = EventLog()
            let cache = try await makeCache(
                client, policy: FreshnessPolicy(freshFor: .seconds(60), maxAge: .seconds(100)), clock: clock,
                events: log.handler)
            try await cache.setEntry(CacheEntry(value: "v", storedAt: clock.now), forKey: 1)
            clock.advance(by: .seconds(99))
            #expect(try await cache.entry(forKey: 1)?.value == "v")
            clock.advance(by: .seconds(1))
            #expect(try await cache.entry(forKey: 1) == nil)
            #expect(try await rowCount(client, cache) == 0)
            #expect(await log.finish() == [.removedExpiredEntry(key: "1")])
        }
    }

    @Test func aRowOfAnotherFormatIsAMissReportedAndDeleted() async throws {
        try await withClient { client in
            let name = uniqueName()
            let log = EventLog()
            let old = try await makeCache(client, name: name, valueFormat: 1)
            let new = try await makeCache(client, name: name, valueFormat: 2, events: log.handler)
            try await old.setEntry(CacheEntry(value: "v1", storedAt: CacheTime(nanosecondsSince1970: 1)), forKey: 1)
            #expect(try await new.entry(forKey: 1) == nil)
            #expect(try await rowCount(client, new) == 0)
            #expect(await log.finish() == [.removedOtherFormat(key: "1", format: 1)])
            try await new.setEntry(CacheEntry(value: "v2", storedAt: CacheTime(nanosecondsSince1970: 2)), forKey: 1)
            #expect(try await new.entry(forKey: 1)?.value == "v2")
        }
    }

    @Test func corruptValueBytesAreAMissReportedAndDeleted() async throws {
        try await withClient { client in
            let log = EventLog()
            let cache = try await makeCache(client, events: log.handler)
            try await cache.setEntry(CacheEntry(value: "v", storedAt: CacheTime(nanosecondsSince1970: 1)), forKey: 1)
            try await execute(
                client,
                "UPDATE \(unescaped: "storeflowable_cache_" + cache.name) SET value = '\\x00ff7b'::bytea WHERE key = '1'"
            )
            #expect(try await cache.entry(forKey: 1) == nil)
            #expect(try await rowCount(client, cache) == 0)
            let events = await log.finish()
            #expect(events.count == 1)
            guard case .removedUndecodableEntry(key: "1", _)? = events.first else {
                Issue.record("unexpected events \(events)")
                return
            }
        }
    }

    @Test func anUndecodableKeyFoundByInvalidateEntriesIsReportedAndDeleted() async throws {
        try await withClient { client in
            let log = EventLog()
            let cache = try await makeCache(client, events: log.handler)
            let table = "storeflowable_cache_" + cache.name
            try await cache.setEntry(CacheEntry(value: "v", storedAt: CacheTime(nanosecondsSince1970: 1)), forKey: 1)
            try await execute(
                client,
                """
                INSERT INTO \(unescaped: table) (key, value, stored_at, invalidated, format, size, seq)
                VALUES ('not a key', '"x"', 1, false, 1, 12, nextval('storeflowable_seq'))
                """)
            try await cache.invalidateEntries(where: { _ in true })
            #expect(try await cache.entry(forKey: 1)?.isInvalidated == true)
            #expect(try await rowCount(client, cache) == 1)
            let events = await log.finish()
            guard events.count == 1, case .removedUndecodableEntry(key: "not a key", _) = events[0] else {
                Issue.record("unexpected events \(events)")
                return
            }
        }
    }
}

/// The number of rows in the table of `cache`.
///
/// - Parameters:
///   - client: The running client.
///   - cache: A cache.
/// - Returns: Its row count.
/// - Throws: What postgres-nio throws.
func rowCount(_ client: PostgresClient, _ cache: PostgresCache<Int, String>) async throws -> Int64? {
    try await scalar(client, "SELECT count(*) FROM \(unescaped: "storeflowable_cache_" + cache.name)")
}
