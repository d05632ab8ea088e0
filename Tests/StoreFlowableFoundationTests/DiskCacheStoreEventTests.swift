import Foundation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

/// A disk cache's damaged files reach a store's events observer as `cacheEntryCorrupt`.
@Suite struct DiskCacheStoreEventTests {
    @Test(.timeLimit(.minutes(1)))
    func aDamagedFileIsReportedAsACorruptEntryAndTheStoreFetchesAgain() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let writer: DiskCache<Int, String> = try makeCache(folder, clock: clock)
            try await writer.setEntry(CacheEntry(value: "cached", storedAt: clock.now), forKey: 1)
            let path = try writer.filePath(forKey: 1)
            var bytes = try readBytes(path)
            bytes[bytes.count - 3] ^= 0x10
            try writeBytes(bytes, to: path)

            let events = StoreEventRecorder()
            let cache = try DiskCache<Int, String>(
                name: "cache", directory: folder, clock: clock,
                events: { event in
                    if let event = StoreEvent(event, valueType: String.self) { events.observe(event) }
                })
            let store = KeyedStore(cache: cache, manager: FlowableDataStateManager(observer: events)) { key in
                "fetched \(key)"
            }
            #expect(try await store[1].requireData() == "fetched 1")
            #expect(events.descriptions.first == "cache entry corrupt: checksum mismatch (\(path))")
            #expect(events.events.first?.key == nil)
            #expect(events.events.first?.dataType == String.self)
            #expect(events.descriptions.dropFirst().first == "cache miss")
        }
    }

    @Test func otherDiskCacheEventsHaveNoStoreEvent() {
        #expect(StoreEvent(.removedExpiredEntry(path: "/x"), valueType: String.self) == nil)
        #expect(StoreEvent(.evicted(path: "/x", bytes: 1), valueType: String.self) == nil)
        #expect(StoreEvent(.removedTemporaryFile(path: "/x"), valueType: String.self) == nil)
    }
}
