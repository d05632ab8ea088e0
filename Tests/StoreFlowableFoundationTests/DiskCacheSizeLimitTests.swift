import Foundation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

/// The size limit: least recently used entries are evicted, reads count as uses, and the order
/// survives a restart through the files' modification times.
@Suite struct DiskCacheSizeLimitTests {
    /// The size of one entry file of a 1,000-byte Blob.
    private func entrySize(in folder: URL, clock: ManualCacheClock) async throws -> Int {
        let probe: DiskCache<Int, Blob> = try makeCache(folder, name: "probe", clock: clock)
        try await probe.setEntry(
            CacheEntry(value: Blob(key: 0, generation: 0, bytes: 1000), storedAt: clock.now), forKey: 0)
        return try fileSize(probe.filePath(forKey: 0))
    }

    @Test(.timeLimit(.minutes(1)))
    func sizeLimitSweepingEvictsTheLeastRecentlyUsed() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let size = try await entrySize(in: folder, clock: clock)
            let events = EventLog()
            let cache: DiskCache<Int, Blob> = try makeCache(
                folder, clock: clock, sizeLimit: size * 7 / 2, events: events)
            for key in 0..<3 {
                try await cache.setEntry(
                    CacheEntry(value: Blob(key: key, generation: 0, bytes: 1000), storedAt: clock.now), forKey: key)
            }
            #expect(try await cache.entry(forKey: 0) != nil)  // 0 is now more recent than 1 and 2
            try await cache.setEntry(
                CacheEntry(value: Blob(key: 3, generation: 0, bytes: 1000), storedAt: clock.now), forKey: 3)
            #expect(events.all == [.evicted(path: try cache.filePath(forKey: 1), bytes: size)])
            #expect(try await cache.entry(forKey: 1) == nil)
            for key in [0, 2, 3] { #expect(try await cache.entry(forKey: key) != nil, "key \(key)") }
            #expect(entryFiles(in: cache.folder).count == 3)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func afterARestartTheOrderComesFromModificationTimes() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let size = try await entrySize(in: folder, clock: clock)
            let first: DiskCache<Int, Blob> = try makeCache(folder, clock: clock)
            for key in 0..<3 {
                try await first.setEntry(
                    CacheEntry(value: Blob(key: key, generation: 0, bytes: 1000), storedAt: clock.now), forKey: key)
            }
            // Key 1 was used longest ago, then key 2, then key 0.
            try setModificationTime(of: first.filePath(forKey: 0), secondsAgo: 100)
            try setModificationTime(of: first.filePath(forKey: 1), secondsAgo: 300)
            try setModificationTime(of: first.filePath(forKey: 2), secondsAgo: 200)

            let events = EventLog()
            let second: DiskCache<Int, Blob> = try makeCache(
                folder, clock: clock, sizeLimit: size * 7 / 2, events: events)
            try await second.setEntry(
                CacheEntry(value: Blob(key: 3, generation: 0, bytes: 1000), storedAt: clock.now), forKey: 3)
            #expect(events.all == [.evicted(path: try second.filePath(forKey: 1), bytes: size)])
            #expect(try await second.entry(forKey: 1) == nil)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func filesOfAnotherInstanceCountTowardsTheLimit() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let size = try await entrySize(in: folder, clock: clock)
            let limited: DiskCache<Int, Blob> = try makeCache(folder, clock: clock, sizeLimit: size * 7 / 2)
            let other: DiskCache<Int, Blob> = try makeCache(folder, clock: clock)
            try await limited.setEntry(
                CacheEntry(value: Blob(key: 0, generation: 0, bytes: 1000), storedAt: clock.now), forKey: 0)
            for key in 1..<4 {
                try await other.setEntry(
                    CacheEntry(value: Blob(key: key, generation: 0, bytes: 1000), storedAt: clock.now), forKey: key)
            }
            // The limited instance's index knows only key 0 until it lists the folder again, which it
            // does when its own count goes over the limit.
            for key in 4..<8 {
                try await limited.setEntry(
                    CacheEntry(value: Blob(key: key, generation: 0, bytes: 1000), storedAt: clock.now), forKey: key)
            }
            #expect(entryFiles(in: limited.folder).count <= 3)
            #expect(try await limited.entry(forKey: 7) != nil)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anEntryLargerThanTheLimitIsRefusedAndRemovesTheOldOne() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let cache: DiskCache<Int, String> = try makeCache(folder, clock: clock, sizeLimit: 200)
            try await cache.setEntry(CacheEntry(value: "small", storedAt: clock.now), forKey: 1)
            await #expect {
                try await cache.setEntry(
                    CacheEntry(value: String(repeating: "x", count: 500), storedAt: clock.now), forKey: 1)
            } throws: { error in
                guard case .entryTooLarge(let bytes, let limit) = error as? DiskCacheError else { return false }
                return bytes > 500 && limit == 200
            }
            #expect(try await cache.entry(forKey: 1) == nil)
        }
    }
}
