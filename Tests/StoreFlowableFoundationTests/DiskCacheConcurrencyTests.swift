import Foundation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

/// Concurrent readers and writers, in one process: every read is a complete value, every write lands.
@Suite struct DiskCacheConcurrencyTests {
    @Test(.timeLimit(.minutes(1)))
    func concurrentWritersOfOneKeyEndWithOneCompleteValue() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let bytes = 256 << 10
            let events = EventLog()
            let cache: DiskCache<Int, Blob> = try makeCache(folder, clock: clock, events: events)
            let second: DiskCache<Int, Blob> = try makeCache(folder, clock: clock, events: events)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<16 {
                    let target = writer.isMultiple(of: 2) ? cache : second
                    group.addTask {
                        let value = Blob(key: 0, generation: writer, bytes: bytes)
                        try await target.setEntry(CacheEntry(value: value, storedAt: clock.now), forKey: 0)
                    }
                }
                try await group.waitForAll()
            }
            let entry = try #require(try await cache.entry(forKey: 0))
            #expect((0..<16).contains(entry.value.generation))
            #expect(entry.value.isComplete(bytes: bytes))
            #expect(
                fileNames(in: cache.folder)
                    == [try cache.filePath(forKey: 0)].map { URL(filePath: $0).lastPathComponent })
            #expect(events.all.isEmpty)
        }
    }

    /// Seed flaw and Nuke's: a reader saw a partially written file.
    @Test(.timeLimit(.minutes(1)))
    func readersNeverSeeAPartiallyWrittenValue() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let bytes = 256 << 10
            let events = EventLog()
            let cache: DiskCache<Int, Blob> = try makeCache(folder, clock: clock, events: events)
            try await cache.setEntry(
                CacheEntry(value: Blob(key: 0, generation: 0, bytes: bytes), storedAt: clock.now), forKey: 0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for generation in 1...12 {
                        let value = Blob(key: 0, generation: generation, bytes: bytes)
                        try await cache.setEntry(CacheEntry(value: value, storedAt: clock.now), forKey: 0)
                        await Task.yield()
                    }
                }
                for _ in 0..<2 {
                    group.addTask {
                        var last = 0
                        for _ in 0..<15 {
                            let entry = try #require(try await cache.entry(forKey: 0), "a read missed during a write")
                            #expect(entry.value.isComplete(bytes: bytes))
                            #expect(entry.value.generation >= last, "a read went back in time")
                            last = entry.value.generation
                            await Task.yield()
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(events.all.isEmpty)
            #expect(try await cache.entry(forKey: 0)?.value.generation == 12)
        }
    }

    /// Seed flaw: the whole dictionary was encoded on a background queue while it was mutated. Here
    /// many keys are written and updated at once, and a new instance sees each key's last value.
    @Test(.timeLimit(.minutes(1)))
    func concurrentWritesOfManyKeysAllReachTheDisk() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let cache: DiskCache<Int, String> = try makeCache(folder, clock: clock)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for key in 0..<200 {
                    group.addTask {
                        try await cache.setEntry(CacheEntry(value: "first \(key)", storedAt: clock.now), forKey: key)
                        try await cache.setEntry(CacheEntry(value: "second \(key)", storedAt: clock.now), forKey: key)
                        if key.isMultiple(of: 10) { try await cache.removeEntry(forKey: key) }
                        if key % 10 == 1 { try await cache.invalidateEntry(forKey: key) }
                    }
                }
                try await group.waitForAll()
            }
            let restarted: DiskCache<Int, String> = try makeCache(folder, clock: clock)
            for key in 0..<200 {
                let entry = try await restarted.entry(forKey: key)
                if key.isMultiple(of: 10) {
                    #expect(entry == nil, "key \(key)")
                } else {
                    #expect(entry?.value == "second \(key)", "key \(key)")
                    #expect(entry?.isInvalidated == (key % 10 == 1), "key \(key)")
                }
            }
            #expect(entryFiles(in: cache.folder).count == 180)
            #expect(temporaryFiles(in: cache.folder).isEmpty)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func invalidationRacingWritesNeverLosesAWrite() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let cache: DiskCache<Int, Int> = try makeCache(folder, clock: clock)
            try await cache.setEntry(CacheEntry(value: 0, storedAt: clock.now), forKey: 0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for value in 1...100 {
                        try await cache.setEntry(CacheEntry(value: value, storedAt: clock.now), forKey: 0)
                    }
                }
                group.addTask {
                    for _ in 0..<100 { try await cache.invalidateEntry(forKey: 0) }
                }
                group.addTask {
                    for _ in 0..<20 { try await cache.invalidateEntries { _ in true } }
                }
                try await group.waitForAll()
            }
            // An invalidation rewrites the value it read during the key's turn, so the last write stays.
            #expect(try await cache.entry(forKey: 0)?.value == 100)
        }
    }
}
