import Foundation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

/// What a new instance over the same folder (a restarted process) sees: values, stored times, expiry,
/// updates, removals and invalidations, all read back from the files.
@Suite struct DiskCacheRestartTests {
    @Test(.timeLimit(.minutes(1)), arguments: [DiskCacheDurability.atomic, .durable])
    func aNewInstanceSeesTheValuesWritten(durability: DiskCacheDurability) async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let first: DiskCache<Int, String> = try makeCache(folder, clock: clock, durability: durability)
            for key in 0..<10 {
                try await first.setEntry(CacheEntry(value: "value \(key)", storedAt: clock.now), forKey: key)
            }
            let second: DiskCache<Int, String> = try makeCache(folder, clock: clock, durability: durability)
            for key in 0..<10 {
                #expect(try await second.entry(forKey: key)?.value == "value \(key)")
            }
            #expect(try await second.entry(forKey: 10) == nil)
            #expect(entryFiles(in: first.folder).count == 10)
            #expect(temporaryFiles(in: first.folder).isEmpty)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func storedAtSurvivesARestart() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            // Stale after 10 s, kept for an hour to stand in for a failing origin.
            let policy = FreshnessPolicy(freshFor: .seconds(10), staleIfError: .seconds(3600))
            let first: DiskCache<String, String> = try makeCache(folder, policy: policy, clock: clock)
            let storedAt = clock.now
            try await first.setEntry(CacheEntry(value: "v", storedAt: storedAt), forKey: "k")
            clock.advance(by: .seconds(30))
            let second: DiskCache<String, String> = try makeCache(folder, policy: policy, clock: clock)
            let entry = try #require(try await second.entry(forKey: "k"))
            #expect(entry.storedAt == storedAt)
            #expect(second.freshness(of: entry) == .staleIfError)
        }
    }

    /// Seed flaw: expired entries came back after a restart.
    @Test(.timeLimit(.minutes(1)))
    func expiredEntriesDoNotComeBackAfterARestart() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let policy = FreshnessPolicy(freshFor: .seconds(10), maxAge: .seconds(60))
            let first: DiskCache<String, String> = try makeCache(folder, policy: policy, clock: clock)
            try await first.setEntry(CacheEntry(value: "old", storedAt: clock.now), forKey: "old")
            clock.advance(by: .seconds(59))
            try await first.setEntry(CacheEntry(value: "young", storedAt: clock.now), forKey: "young")
            clock.advance(by: .seconds(1))  // "old" is now exactly 60 s old: expired.
            let oldPath = try first.filePath(forKey: "old")

            let events = EventLog()
            let second: DiskCache<String, String> = try makeCache(folder, policy: policy, clock: clock, events: events)
            #expect(try await second.entry(forKey: "old") == nil)
            #expect(!fileExists(oldPath), "an expired entry is deleted when found")
            #expect(events.all == [.removedExpiredEntry(path: oldPath)])
            #expect(try await second.entry(forKey: "young")?.value == "young")

            let third: DiskCache<String, String> = try makeCache(folder, policy: policy, clock: clock)
            #expect(try await third.entry(forKey: "old") == nil)
        }
    }

    /// Seed flaw: the cache saved only when a new key was inserted, so updates were lost on disk.
    @Test(.timeLimit(.minutes(1)))
    func updatesOfAnExistingKeyReachTheDisk() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let first: DiskCache<String, String> = try makeCache(folder, clock: clock)
            try await first.setEntry(CacheEntry(value: "v1", storedAt: clock.now), forKey: "k")
            clock.advance(by: .seconds(5))
            try await first.setEntry(CacheEntry(value: "v2", storedAt: clock.now), forKey: "k")
            let second: DiskCache<String, String> = try makeCache(folder, clock: clock)
            #expect(try await second.entry(forKey: "k") == CacheEntry(value: "v2", storedAt: clock.now))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func removalsReachTheDisk() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let first: DiskCache<String, String> = try makeCache(folder, clock: clock)
            try await first.setEntry(CacheEntry(value: "a", storedAt: clock.now), forKey: "a")
            try await first.setEntry(CacheEntry(value: "b", storedAt: clock.now), forKey: "b")
            try await first.removeEntry(forKey: "a")
            try await first.removeEntry(forKey: "never written")
            #expect(!fileExists(try first.filePath(forKey: "a")))
            let second: DiskCache<String, String> = try makeCache(folder, clock: clock)
            #expect(try await second.entry(forKey: "a") == nil)
            #expect(try await second.entry(forKey: "b")?.value == "b")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func removeAllEntriesDeletesEveryEntryFileAndNothingElse() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let first: DiskCache<Int, String> = try makeCache(folder, clock: clock)
            for key in 0..<5 { try await first.setEntry(CacheEntry(value: "\(key)", storedAt: clock.now), forKey: key) }
            let notes = first.folder.appending(path: "notes.txt")
            try Data("keep me".utf8).write(to: notes)
            try await first.removeAllEntries()
            #expect(entryFiles(in: first.folder).isEmpty)
            #expect(fileNames(in: first.folder) == ["notes.txt"])
            let second: DiskCache<Int, String> = try makeCache(folder, clock: clock)
            for key in 0..<5 { #expect(try await second.entry(forKey: key) == nil) }
            // A missing folder holds no entries.
            let missing: DiskCache<Int, String> = try makeCache(folder, name: "missing", clock: clock)
            try await missing.removeAllEntries()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func invalidationSurvivesARestart() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let first: DiskCache<String, String> = try makeCache(folder, clock: clock)
            let storedAt = clock.now
            try await first.setEntry(CacheEntry(value: "a", storedAt: storedAt), forKey: "a")
            try await first.setEntry(CacheEntry(value: "b", storedAt: storedAt), forKey: "b")
            try await first.invalidateEntry(forKey: "a")
            try await first.invalidateEntry(forKey: "absent")
            #expect(
                try await first.entry(forKey: "a") == CacheEntry(value: "a", storedAt: storedAt, isInvalidated: true))
            #expect(temporaryFiles(in: first.folder).isEmpty)

            let second: DiskCache<String, String> = try makeCache(folder, clock: clock)
            #expect(
                try await second.entry(forKey: "a") == CacheEntry(value: "a", storedAt: storedAt, isInvalidated: true))
            #expect(try await second.entry(forKey: "b") == CacheEntry(value: "b", storedAt: storedAt))
            // The next write replaces the mark.
            try await second.setEntry(CacheEntry(value: "a2", storedAt: clock.now), forKey: "a")
            #expect(try await second.entry(forKey: "a")?.isInvalidated == false)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func invalidateEntriesWhereMarksTheChosenKeysAndSurvivesARestart() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let first: DiskCache<Int, String> = try makeCache(folder, clock: clock)
            for key in 0..<10 {
                try await first.setEntry(CacheEntry(value: "\(key)", storedAt: clock.now), forKey: key)
            }
            let asked = LockedValue<[Int]>([])
            try await first.invalidateEntries { key in
                asked.withLock { $0.append(key) }
                return key.isMultiple(of: 2)
            }
            #expect(asked.withLock { $0.sorted() } == Array(0..<10))
            let second: DiskCache<Int, String> = try makeCache(folder, clock: clock)
            for key in 0..<10 {
                let entry = try #require(try await second.entry(forKey: key))
                #expect(entry.value == "\(key)")
                #expect(entry.isInvalidated == key.isMultiple(of: 2), "key \(key)")
            }
            // Invalidated entries are not offered again.
            let askedAgain = LockedValue(0)
            try await second.invalidateEntries { _ in
                askedAgain.withLock { $0 += 1 }
                return true
            }
            #expect(askedAgain.withLock { $0 } == 5)
        }
    }
}
