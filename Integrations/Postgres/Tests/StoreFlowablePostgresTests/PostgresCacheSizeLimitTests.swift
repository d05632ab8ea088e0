import StoreFlowable
import StoreFlowablePostgres
import Testing

/// With a size limit, writes evict the oldest written rows, never the one just written; an entry
/// larger than the limit is a typed error.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheSizeLimitTests {
    /// A value whose JSON takes `bytes` bytes (with its quotes); with a one-digit key the row takes one
    /// more.
    private func value(_ letter: Character, bytes: Int) -> String { String(repeating: letter, count: bytes - 2) }

    @Test func writesEvictTheOldestWrittenFirst() async throws {
        try await withClient { client in
            let log = EventLog()
            let cache = try await makeCache(client, sizeLimit: 35, events: log.handler)
            let time = CacheTime(nanosecondsSince1970: 1)
            // 11 bytes each: three fit.
            for key in 1...3 {
                try await cache.setEntry(CacheEntry(value: value("a", bytes: 10), storedAt: time), forKey: key)
            }
            // Key 1 is written again: now key 2 is the oldest written.
            try await cache.setEntry(CacheEntry(value: value("b", bytes: 10), storedAt: time), forKey: 1)
            try await cache.setEntry(CacheEntry(value: value("c", bytes: 10), storedAt: time), forKey: 4)
            #expect(try await cache.entry(forKey: 2) == nil)
            #expect(try await cache.entry(forKey: 1)?.value == value("b", bytes: 10))
            #expect(try await cache.entry(forKey: 3) != nil)
            #expect(try await cache.entry(forKey: 4) != nil)
            #expect(await log.finish() == [.evicted(key: "2", bytes: 11)])
        }
    }

    @Test func anEntryAsLargeAsTheLimitEvictsEveryOtherAndStays() async throws {
        try await withClient { client in
            let log = EventLog()
            let cache = try await makeCache(client, sizeLimit: 35, events: log.handler)
            let time = CacheTime(nanosecondsSince1970: 1)
            for key in 1...3 {
                try await cache.setEntry(CacheEntry(value: value("a", bytes: 10), storedAt: time), forKey: key)
            }
            try await cache.setEntry(CacheEntry(value: value("z", bytes: 34), storedAt: time), forKey: 9)
            #expect(try await cache.entry(forKey: 9)?.value == value("z", bytes: 34))
            for key in 1...3 { #expect(try await cache.entry(forKey: key) == nil) }
            #expect(
                await log.finish() == [
                    .evicted(key: "1", bytes: 11), .evicted(key: "2", bytes: 11), .evicted(key: "3", bytes: 11),
                ])
        }
    }

    @Test func anEntryLargerThanTheLimitIsATypedErrorAndRemovesThePreviousEntry() async throws {
        try await withClient { client in
            let cache = try await makeCache(client, sizeLimit: 35)
            let time = CacheTime(nanosecondsSince1970: 1)
            try await cache.setEntry(CacheEntry(value: value("a", bytes: 10), storedAt: time), forKey: 1)
            try await cache.setEntry(CacheEntry(value: value("a", bytes: 10), storedAt: time), forKey: 2)
            await #expect {
                try await cache.setEntry(CacheEntry(value: value("x", bytes: 35), storedAt: time), forKey: 1)
            } throws: { error in
                guard case .entryTooLarge(bytes: 36, sizeLimit: 35) = error as? PostgresCacheError else { return false }
                return true
            }
            #expect(try await cache.entry(forKey: 1) == nil)
            #expect(try await cache.entry(forKey: 2) != nil)
        }
    }
}
