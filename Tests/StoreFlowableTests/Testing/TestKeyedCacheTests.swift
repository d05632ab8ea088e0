import StoreFlowable
import StoreFlowableTesting
import Testing

/// An error with a readable description, private to this file.
private struct KeyedCacheFailure: Error, Equatable, CustomStringConvertible {
    let name: String
    var description: String { name }
}

@Suite struct TestKeyedCacheTests {
    private let clock = ManualCacheClock()

    private func entry(_ value: String, at seconds: Int64 = 0, invalidated: Bool = false) -> CacheEntry<String> {
        CacheEntry(
            value: value, storedAt: CacheTime(nanosecondsSince1970: seconds * 1_000_000_000),
            isInvalidated: invalidated)
    }

    @Test func reportsItsPolicyAndClock() {
        let policy = FreshnessPolicy(freshFor: .seconds(5))
        let cache = TestKeyedCache<Int, String>(policy: policy, clock: clock)
        #expect(cache.policy == policy)
        #expect(cache.clock.now == clock.now)
        clock.advance(by: .seconds(1))
        #expect(cache.clock.now == clock.now)
        let defaults = TestKeyedCache<Int, String>()
        #expect(defaults.policy == .forever)
    }

    @Test func directAccessIsNotRecorded() {
        let cache = TestKeyedCache<Int, String>([1: entry("one")], clock: clock)
        #expect(cache[1] == entry("one"))
        cache[2] = entry("two", at: 7, invalidated: true)
        cache.insert("three", forKey: 3)
        cache.insert("four", forKey: 4, storedAt: CacheTime(nanosecondsSince1970: 4), isInvalidated: true)
        #expect(cache[3] == CacheEntry(value: "three", storedAt: clock.now))
        let four = CacheEntry(value: "four", storedAt: CacheTime(nanosecondsSince1970: 4), isInvalidated: true)
        #expect(cache[4] == four)
        cache[1] = nil
        #expect(Set(cache.entries.keys) == [2, 3, 4])
        cache.entries = [9: entry("nine")]
        #expect(cache.entries == [9: entry("nine")])
        #expect(cache.readCount == 0)
        #expect(cache.writeAttemptCount == 0)
        #expect(cache.operations.isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func readsReturnEntriesAsStoredAndCount() async throws {
        let old = entry("old", at: 1, invalidated: true)
        let cache = TestKeyedCache<Int, String>([1: old], clock: clock)
        clock.advance(by: .seconds(100))
        #expect(try await cache.entry(forKey: 1) == old, "a read never changes an entry")
        #expect(try await cache.entry(forKey: 2) == nil)
        #expect(try await cache.entry(forKey: 1) == old)
        #expect(cache.readCount == 3)
        #expect(cache.readCount(forKey: 1) == 2)
        #expect(cache.readKeys == [1, 2, 1])
        #expect(cache.operations == [.read(1), .read(2), .read(1)])
        #expect(cache.writeAttemptCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func writesStoreEntriesExactlyAndRecordThemPerKey() async throws {
        let cache = TestKeyedCache<Int, String>(clock: clock)
        let first = entry("a", at: 3)
        let second = entry("b", at: 2, invalidated: true)
        try await cache.setEntry(first, forKey: 1)
        try await cache.setEntry(entry("x"), forKey: 2)
        try await cache.setEntry(second, forKey: 1)
        #expect(cache[1] == second, "stored as given: no new timestamp, the mark kept")
        #expect(cache.writes(forKey: 1) == [first, second])
        #expect(cache.writes(forKey: 3).isEmpty)
        #expect(cache.writtenEntries == [1: [first, second], 2: [entry("x")]])
        #expect(cache.writeCount == 3)
        #expect(cache.writeAttemptCount == 3)
        #expect(cache.operations == [.write(1, first), .write(2, entry("x")), .write(1, second)])
    }

    @Test(.timeLimit(.minutes(1)))
    func removalsInvalidationsAndRemoveAllAreApplied() async throws {
        let cache = TestKeyedCache<Int, String>([1: entry("1"), 2: entry("2"), 3: entry("3"), 4: entry("4")])
        try await cache.removeEntry(forKey: 1)
        try await cache.removeEntry(forKey: 99)
        try await cache.invalidateEntry(forKey: 2)
        try await cache.invalidateEntry(forKey: 98)
        #expect(cache[1] == nil)
        #expect(cache[2] == entry("2", invalidated: true), "value and timestamp kept")
        #expect(cache[98] == nil, "invalidating a missing key stores nothing")
        try await cache.invalidateEntries { $0 >= 3 || $0 == 1 }
        #expect(cache[3] == entry("3", invalidated: true))
        #expect(cache[4] == entry("4", invalidated: true))
        #expect(cache.removedKeys == [1, 99])
        #expect(cache.invalidatedKeys == [2, 98])
        #expect(cache.predicateInvalidationCount == 1)
        try await cache.removeAllEntries()
        #expect(cache.entries.isEmpty)
        #expect(cache.removeAllCount == 1)
        #expect(cache.writeAttemptCount == 6)
        #expect(cache.writeCount == 0, "writeCount counts setEntry only")
        #expect(
            cache.operations == [
                .remove(1), .remove(99), .invalidate(2), .invalidate(98), .invalidateMatching([3, 4]), .removeAll,
            ])
    }

    @Test(.timeLimit(.minutes(1)))
    func failingReadsThrowAndStillCount() async throws {
        let cache = TestKeyedCache<Int, String>([1: entry("one")])
        cache.failReads(with: KeyedCacheFailure(name: "unreadable"))
        await #expect(throws: KeyedCacheFailure(name: "unreadable")) { try await cache.entry(forKey: 1) }
        #expect(cache.readCount == 1)
        #expect(cache.operations.isEmpty, "a failing read took no effect")
        cache.failReads(with: nil)
        #expect(try await cache.entry(forKey: 1) == entry("one"))
        #expect(cache.readCount == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func failingWritesChangeAndRecordNothing() async throws {
        let cache = TestKeyedCache<Int, String>([1: entry("one"), 2: entry("two")])
        let failure = KeyedCacheFailure(name: "disk full")
        cache.failWrites(with: failure)
        await #expect(throws: failure) { try await cache.setEntry(self.entry("new"), forKey: 1) }
        await #expect(throws: failure) { try await cache.removeEntry(forKey: 1) }
        await #expect(throws: failure) { try await cache.invalidateEntry(forKey: 1) }
        await #expect(throws: failure) { try await cache.invalidateEntries { _ in true } }
        await #expect(throws: failure) { try await cache.removeAllEntries() }
        #expect(cache.entries == [1: entry("one"), 2: entry("two")])
        #expect(cache.writeAttemptCount == 5)
        #expect(cache.writeCount == 0)
        #expect(cache.writes(forKey: 1).isEmpty)
        #expect(cache.removedKeys.isEmpty)
        #expect(cache.invalidatedKeys.isEmpty)
        #expect(cache.predicateInvalidationCount == 0)
        #expect(cache.removeAllCount == 0)
        #expect(cache.operations.isEmpty)
        #expect(try await cache.entry(forKey: 1) == entry("one"), "reads still work")
        cache.failWrites(with: nil)
        try await cache.setEntry(entry("new"), forKey: 1)
        #expect(cache[1] == entry("new"))
    }

    @Test(.timeLimit(.minutes(1)))
    func heldWritesWaitUntilReleased() async throws {
        let cache = TestKeyedCache<Int, String>([1: entry("old")])
        cache.holdWrites()
        let write = Task { try await cache.setEntry(entry("new"), forKey: 1) }
        let removal = Task { try await cache.removeEntry(forKey: 2) }
        await cache.waitForWriteAttempts(2)
        #expect(cache.heldWriteCount == 2)
        #expect(cache[1] == entry("old"))
        #expect(cache.writeCount == 0)
        #expect(cache.removedKeys.isEmpty)
        cache.releaseWrites()
        try await write.value
        try await removal.value
        #expect(cache[1] == entry("new"))
        #expect(cache.removedKeys == [2])
        #expect(cache.heldWriteCount == 0)
        try await cache.setEntry(entry("after"), forKey: 1)
        #expect(cache[1] == entry("after"), "released writes stay released")
    }

    @Test(.timeLimit(.minutes(1)))
    func heldWriteIgnoresCancellationAndFailsWhenWritesFailAtRelease() async throws {
        let cache = TestKeyedCache<Int, String>([1: entry("old")])
        cache.holdWrites()
        let write = Task { try await cache.setEntry(entry("new"), forKey: 1) }
        await cache.waitForWriteAttempts(1)
        write.cancel()
        cache.failWrites(with: KeyedCacheFailure(name: "late"))
        cache.releaseWrites()
        await #expect(throws: KeyedCacheFailure(name: "late")) { try await write.value }
        #expect(cache[1] == entry("old"))
        #expect(cache.writeAttemptCount == 1)
        #expect(cache.writeCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func heldReadReturnsWhatItReadOnArrival() async throws {
        let cache = TestKeyedCache<Int, String>([1: entry("old")])
        cache.holdReads()
        let read = Task { try await cache.entry(forKey: 1) }
        await cache.waitForReads(1)
        #expect(cache.heldReadCount == 1)
        try await cache.setEntry(entry("new"), forKey: 1)
        read.cancel()
        cache.releaseReads()
        #expect(try await read.value == entry("old"), "the read took effect when it arrived")
        #expect(cache.heldReadCount == 0)
        #expect(try await cache.entry(forKey: 1) == entry("new"), "released reads stay released")
    }

    @Test(.timeLimit(.minutes(1)))
    func waitForWritesWaitsForSuccessfulWrites() async throws {
        let cache = TestKeyedCache<Int, String>()
        cache.failWrites(with: KeyedCacheFailure(name: "no"))
        let waiter = Task { await cache.waitForWrites(1) }
        try? await cache.setEntry(entry("failed"), forKey: 1)
        #expect(cache.writeAttemptCount == 1)
        cache.failWrites(with: nil)
        try await cache.removeEntry(forKey: 1)
        try await cache.setEntry(entry("done"), forKey: 1)
        await waiter.value
        #expect(cache.writeCount == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func manyWaitersWakeWhenConcurrentReadsAndWritesArrive() async {
        let cache = TestKeyedCache<Int, Int>()
        await withTaskGroup(of: Void.self) { group in
            for waiter in 0..<100 {
                group.addTask { await cache.waitForReads(waiter % 50 + 1) }
                group.addTask { await cache.waitForWriteAttempts(waiter % 50 + 1) }
                group.addTask { await cache.waitForWrites(waiter % 50 + 1) }
            }
            for value in 0..<50 {
                group.addTask { _ = try? await cache.entry(forKey: value % 5) }
                group.addTask {
                    try? await cache.setEntry(CacheEntry(value: value, storedAt: .distantPast), forKey: value % 5)
                }
            }
        }
        #expect(cache.readCount == 50)
        #expect(cache.writeCount == 50)
        #expect(Set(cache.writtenEntries.values.joined().map(\.value)) == Set(0..<50))
        #expect(cache.writes(forKey: 0).count == 10)
    }

    @Test(.timeLimit(.minutes(1)))
    func cancelledWaitsReturnEarly() async {
        let cache = TestKeyedCache<Int, Int>()
        let waiters = [
            Task { await cache.waitForReads(1) },
            Task { await cache.waitForWriteAttempts(1) },
            Task { await cache.waitForWrites(1) },
        ]
        for waiter in waiters {
            waiter.cancel()
            await waiter.value
        }
        #expect(cache.writeAttemptCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func resetRecordsKeepsEntriesAndRestartsCounts() async throws {
        let cache = TestKeyedCache<Int, String>()
        try await cache.setEntry(entry("one"), forKey: 1)
        _ = try await cache.entry(forKey: 1)
        cache.resetRecords()
        #expect(cache.readCount == 0)
        #expect(cache.writeCount == 0)
        #expect(cache.writeAttemptCount == 0)
        #expect(cache.writtenEntries.isEmpty)
        #expect(cache.operations.isEmpty)
        #expect(cache[1] == entry("one"))
        let waiter = Task { await cache.waitForWrites(1) }
        try await cache.setEntry(entry("two"), forKey: 1)
        await waiter.value
        #expect(cache.operations == [.write(1, entry("two"))])
    }

    @Test(.timeLimit(.minutes(1)))
    func thePredicateRunsWithoutTheLock() async throws {
        let cache = TestKeyedCache<Int, String>([1: entry("one"), 2: entry("two")])
        // The predicate uses the cache: under the cache's lock it would deadlock.
        try await cache.invalidateEntries { key in cache.readCount == 0 && key == 2 }
        #expect(cache[1] == entry("one"))
        #expect(cache[2] == entry("two", invalidated: true))
        #expect(cache.operations == [.invalidateMatching([2])])
    }

    @Test(.timeLimit(.minutes(1)))
    func aReplacedEntryIsReleasedAfterTheCacheUnlocks() async throws {
        let cache = TestKeyedCache<Int, ReleaseProbe>()
        cache[1] = CacheEntry(value: ReleaseProbe(cache: cache), storedAt: .distantPast)
        // Releasing the probe runs its deinit, which uses the cache: under the cache's lock it would
        // deadlock.
        cache.resetRecords()
        try await cache.removeEntry(forKey: 1)
        await #expect(throws: ReleaseProbe.Released.self) { try await cache.entry(forKey: 1) }
    }

    @Test(.timeLimit(.minutes(1)))
    func worksAsAnyKeyedCache() async throws {
        let cache: any KeyedCache<Int, String> = TestKeyedCache<Int, String>(
            policy: FreshnessPolicy(freshFor: .seconds(10)), clock: clock)
        try await cache.setEntry(CacheEntry(value: "v", storedAt: clock.now), forKey: 1)
        let stored = try #require(try await cache.entry(forKey: 1))
        #expect(cache.freshness(of: stored) == .fresh)
        clock.advance(by: .seconds(10))
        #expect(cache.freshness(of: stored) == .stale)
    }
}

/// A value that uses its cache when it is released, as the `deinit` of a test's own type might.
private final class ReleaseProbe: Sendable {
    /// The error the probe makes its cache's reads throw once it is released.
    struct Released: Error {}

    let cache: TestKeyedCache<Int, ReleaseProbe>

    init(cache: TestKeyedCache<Int, ReleaseProbe>) {
        self.cache = cache
    }

    deinit {
        cache.failReads(with: Released())
    }
}
