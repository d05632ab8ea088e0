import StoreFlowableTesting
import Testing

/// An error with a readable description, private to this file.
private struct CacheFailure: Error, Equatable, CustomStringConvertible {
    let name: String
    var description: String { name }
}

@Suite struct InMemoryCacheTests {
    @Test(.timeLimit(.minutes(1)))
    func loadReturnsTheValueAndCountsReads() async throws {
        let cache = InMemoryCache<String>("cached")
        #expect(try await cache.load() == "cached")
        cache.value = "direct"
        #expect(try await cache.load() == "direct")
        #expect(cache.readCount == 2)
        #expect(cache.writeCount == 0, "direct access must not be recorded")
    }

    @Test(.timeLimit(.minutes(1)))
    func saveRecordsSuccessfulWritesInOrder() async throws {
        let cache = InMemoryCache<String>()
        try await cache.save("first")
        try await cache.save(nil)
        try await cache.save("third")
        #expect(cache.writes == ["first", nil, "third"])
        #expect(cache.writeCount == 3)
        #expect(cache.writeAttemptCount == 3)
        #expect(cache.value == "third")
    }

    @Test(.timeLimit(.minutes(1)))
    func failingReadsThrowAndStillCount() async throws {
        let cache = InMemoryCache<String>("cached")
        cache.failReads(with: CacheFailure(name: "unreadable"))
        await #expect(throws: CacheFailure(name: "unreadable")) { try await cache.load() }
        #expect(cache.readCount == 1)
        cache.failReads(with: nil)
        #expect(try await cache.load() == "cached")
        #expect(cache.readCount == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func failingWritesLeaveTheValueAndRecordsUnchanged() async throws {
        let cache = InMemoryCache<String>("old")
        cache.failWrites(with: CacheFailure(name: "disk full"))
        await #expect(throws: CacheFailure(name: "disk full")) { try await cache.save("new") }
        #expect(cache.value == "old")
        #expect(cache.writes.isEmpty)
        #expect(cache.writeCount == 0)
        #expect(cache.writeAttemptCount == 1)
        cache.failWrites(with: nil)
        try await cache.save("new")
        #expect(cache.value == "new")
        #expect(cache.writes == ["new"])
    }

    @Test(.timeLimit(.minutes(1)))
    func heldWritesWaitUntilReleased() async throws {
        let cache = InMemoryCache<String>("old")
        cache.holdWrites()
        let write = Task { try await cache.save("new") }
        await cache.waitForWriteAttempts(1)
        #expect(cache.heldWriteCount == 1)
        #expect(cache.value == "old")
        #expect(cache.writeCount == 0)
        cache.releaseWrites()
        try await write.value
        #expect(cache.value == "new")
        #expect(cache.writes == ["new"])
        #expect(cache.heldWriteCount == 0)
        try await cache.save("after")
        #expect(cache.value == "after", "released writes stay released")
    }

    @Test(.timeLimit(.minutes(1)))
    func heldWriteIgnoresCancellation() async throws {
        let cache = InMemoryCache<String>("old")
        cache.holdWrites()
        let write = Task { try await cache.save("new") }
        await cache.waitForWriteAttempts(1)
        write.cancel()
        #expect(cache.heldWriteCount == 1)
        cache.releaseWrites()
        try await write.value
        #expect(cache.value == "new")
    }

    @Test(.timeLimit(.minutes(1)))
    func heldWriteFailsWhenWritesFailAtRelease() async throws {
        let cache = InMemoryCache<String>("old")
        cache.holdWrites()
        let write = Task { try await cache.save("new") }
        await cache.waitForWriteAttempts(1)
        cache.failWrites(with: CacheFailure(name: "late"))
        cache.releaseWrites()
        await #expect(throws: CacheFailure(name: "late")) { try await write.value }
        #expect(cache.value == "old")
        #expect(cache.writeAttemptCount == 1)
        #expect(cache.writeCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func manyWaitersWakeWhenConcurrentReadsAndWritesArrive() async throws {
        let cache = InMemoryCache<Int>(0)
        await withTaskGroup(of: Void.self) { group in
            for waiter in 0..<100 {
                group.addTask { await cache.waitForReads(waiter % 50 + 1) }
                group.addTask { await cache.waitForWriteAttempts(waiter % 50 + 1) }
            }
            for value in 0..<50 {
                group.addTask { _ = try? await cache.load() }
                group.addTask { try? await cache.save(value) }
            }
        }
        #expect(cache.readCount == 50)
        #expect(cache.writeCount == 50)
        #expect(Set(cache.writes.compactMap { $0 }) == Set(0..<50))
    }

    @Test(.timeLimit(.minutes(1)))
    func cancelledWaitReturnsEarly() async {
        let cache = InMemoryCache<Int>()
        let waiter = Task { await cache.waitForWriteAttempts(1) }
        waiter.cancel()
        await waiter.value
        #expect(cache.writeAttemptCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func aReplacedValueIsReleasedAfterTheCacheUnlocks() async throws {
        let cache = InMemoryCache<ReleaseProbe>()
        cache.value = ReleaseProbe(cache: cache)
        // Releasing the probe runs its deinit, which uses the cache: under the cache's lock it would
        // deadlock.
        cache.value = nil
        await #expect(throws: ReleaseProbe.Released.self) { try await cache.load() }
    }
}

/// A value that uses its cache when it is released, as the `deinit` of a test's own type might.
private final class ReleaseProbe: Sendable {
    /// The error the probe makes its cache's reads throw once it is released.
    struct Released: Error {}

    let cache: InMemoryCache<ReleaseProbe>

    init(cache: InMemoryCache<ReleaseProbe>) {
        self.cache = cache
    }

    deinit {
        cache.failReads(with: Released())
    }
}
