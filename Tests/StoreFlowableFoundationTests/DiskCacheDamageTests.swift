import Foundation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

/// Damaged, foreign and colliding files are misses: reported, deleted, never served, never a crash.
@Suite struct DiskCacheDamageTests {
    /// Ways to damage an entry file, and the problem each must be reported as.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case truncated, emptied, bitFlipped, wrongVersion, notACacheFile, trailingBytes

        var testDescription: String { rawValue }

        /// The problem the cache must report.
        var problem: DiskCacheFileProblem {
            switch self {
            case .truncated, .emptied: .truncated
            case .bitFlipped: .checksumMismatch
            case .wrongVersion: .unsupportedVersion(2)
            case .notACacheFile: .notACacheFile
            case .trailingBytes: .malformedHeader
            }
        }

        /// The damaged bytes.
        func apply(to bytes: [UInt8]) -> [UInt8] {
            var bytes = bytes
            switch self {
            case .truncated: bytes.removeLast(bytes.count / 2)
            case .emptied: bytes = []
            case .bitFlipped: bytes[bytes.count - 3] ^= 0x10
            case .wrongVersion: bytes[4] = 2
            case .notACacheFile: bytes = Array("{\"not\": \"a cache file, but long enough for a header\"}".utf8)
            case .trailingBytes: bytes.append(0)
            }
            return bytes
        }
    }

    /// Seed flaw: a corrupt file replaced the whole cache with an empty one.
    @Test(.timeLimit(.minutes(1)), arguments: Damage.allCases)
    func aDamagedFileIsAReportedDeletedMissAndOtherEntriesSurvive(damage: Damage) async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let first: DiskCache<String, String> = try makeCache(folder, clock: clock)
            try await first.setEntry(CacheEntry(value: "a", storedAt: clock.now), forKey: "a")
            try await first.setEntry(CacheEntry(value: "b", storedAt: clock.now), forKey: "b")
            let path = try first.filePath(forKey: "a")
            try writeBytes(damage.apply(to: readBytes(path)), to: path)

            let events = EventLog()
            let second: DiskCache<String, String> = try makeCache(folder, clock: clock, events: events)
            #expect(try await second.entry(forKey: "a") == nil)
            #expect(!fileExists(path))
            #expect(events.all == [.removedDamagedFile(path: path, problem: damage.problem)])
            #expect(try await second.entry(forKey: "b")?.value == "b")
            // The key can be written again.
            try await second.setEntry(CacheEntry(value: "a2", storedAt: clock.now), forKey: "a")
            #expect(try await second.entry(forKey: "a")?.value == "a2")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aFileHoldingAnotherKeyIsNeverServedForThisKey() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let events = EventLog()
            let cache: DiskCache<String, String> = try makeCache(folder, clock: clock, events: events)
            try await cache.setEntry(CacheEntry(value: "a", storedAt: clock.now), forKey: "a")
            try await cache.setEntry(CacheEntry(value: "b", storedAt: clock.now), forKey: "b")
            let pathA = try cache.filePath(forKey: "a")
            try writeBytes(readBytes(try cache.filePath(forKey: "b")), to: pathA)
            #expect(try await cache.entry(forKey: "a") == nil)
            #expect(!fileExists(pathA))
            #expect(events.all == [.removedDamagedFile(path: pathA, problem: .keyMismatch)])
            #expect(try await cache.entry(forKey: "b")?.value == "b")
        }
    }

    /// Seed flaw: entries were keyed by `Key.id`, so two keys could share one value. Here every key
    /// hashes to the same file name.
    @Test(.timeLimit(.minutes(1)))
    func keysWithCollidingFileNamesNeverReadEachOthersValues() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let events = EventLog()
            let cache = try DiskCache<Int, String>(
                name: "collide", directory: folder, policy: .forever, clock: clock,
                coder: JSONDiskCacheCoder(), durability: .atomic, sizeLimit: nil, events: events.handler,
                keyHash: { _ in 42 })
            try await cache.setEntry(CacheEntry(value: "one", storedAt: clock.now), forKey: 1)
            try await cache.setEntry(CacheEntry(value: "two", storedAt: clock.now), forKey: 2)
            #expect(try cache.filePath(forKey: 1) == cache.filePath(forKey: 2))
            #expect(try await cache.entry(forKey: 1) == nil, "key 1 must never read key 2's value")
            #expect(events.damaged == [.removedDamagedFile(path: try cache.filePath(forKey: 1), problem: .keyMismatch)])
            try await cache.invalidateEntry(forKey: 2)  // nothing left to invalidate
            try await cache.setEntry(CacheEntry(value: "one", storedAt: clock.now), forKey: 1)
            #expect(try await cache.entry(forKey: 1)?.value == "one")
            #expect(try await cache.entry(forKey: 2) == nil)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aValueTheCoderCannotDecodeIsAReportedDeletedMiss() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let old: DiskCache<Int, String> = try makeCache(folder, clock: clock)
            try await old.setEntry(CacheEntry(value: "a string, not a Blob", storedAt: clock.now), forKey: 1)
            let events = EventLog()
            let new: DiskCache<Int, Blob> = try makeCache(folder, clock: clock, events: events)
            #expect(try await new.entry(forKey: 1) == nil)
            #expect(!fileExists(try new.filePath(forKey: 1)))
            guard case .removedDamagedFile(_, .undecodableValue) = events.all.first, events.all.count == 1 else {
                Issue.record("expected one undecodable value event, got \(events.all)")
                return
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func invalidateEntriesWhereDeletesDamagedFilesItFinds() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let events = EventLog()
            let cache: DiskCache<Int, String> = try makeCache(folder, clock: clock, events: events)
            for key in 0..<3 { try await cache.setEntry(CacheEntry(value: "\(key)", storedAt: clock.now), forKey: key) }
            let damaged = try cache.filePath(forKey: 1)
            try writeBytes(Damage.bitFlipped.apply(to: readBytes(damaged)), to: damaged)
            try await cache.invalidateEntries { _ in true }
            #expect(events.all == [.removedDamagedFile(path: damaged, problem: .checksumMismatch)])
            #expect(try await cache.entry(forKey: 0)?.isInvalidated == true)
            #expect(try await cache.entry(forKey: 1) == nil)
            #expect(try await cache.entry(forKey: 2)?.isInvalidated == true)
        }
    }
}
