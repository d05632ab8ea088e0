import Dispatch
import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import StoreFlowableTesting
import Synchronization
import Testing

/// The reads a `PostgresSingleFlight`'s cache remembers for the fetch that follows them: which reads
/// count, which are forgotten, and that a fetch with no such read (a `refresh()`) calls the origin.
/// Every clock here is manual: nothing waits for real time.
@Suite(.timeLimit(.minutes(2)))
struct SingleFlightReadReviewTests {
    typealias Instance = PostgresSingleFlightTests.Instance

    /// Opens `count` instances on one new cache, on `clock`, with a lease of 10 seconds, counting the
    /// origin's calls in `calls` (the origin returns `value-<key>-<call>`).
    static func instances(
        _ count: Int, client: PostgresClient, clock: any CacheClock = ManualCacheClock(), calls: CallCounter
    ) async throws -> [Instance] {
        try await PostgresSingleFlightTests.instances(
            count, client: client, name: uniqueName(), clock: clock, lease: .seconds(10)
        ) { key in
            "value-\(key)-\(calls.increment())"
        }
    }

    // MARK: Reads a refresh does not follow

    @Test func aRefreshAfterAFreshReadCallsTheOriginEvenAfterAnEarlierMiss() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let fleet = try await Self.instances(2, client: client, calls: calls)
            let store = fleet[0].stores[5]
            // Instance 0 looks at its cache only (a miss), instance 1 then writes the key, and instance 0
            // reads that value fresh: its last read is a hit.
            await #expect(throws: StoreFlowableError.self) { try await store.requireData(from: .cache) }
            try await fleet[1].cache.setEntry(CacheEntry(value: "other", storedAt: fleet[1].cache.clock.now), forKey: 5)
            #expect(try await store.requireData() == "other")
            // A refresh fetches from the origin whatever the cache holds.
            await store.refresh()
            #expect(calls.value == 1)
            #expect(try await store.requireData(from: .cache) == "value-5-1")
        }
    }

    @Test func aReadThatTheInstancesOwnWriteOverlapsIsNotRemembered() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let clock = PausingCacheClock()
            let fleet = try await Self.instances(1, client: client, clock: clock, calls: calls)
            let now = clock.now
            // A read finds no row, and stops before it records what it found (its first look at the
            // clock); this instance's own write of the key then runs to its end.
            clock.pauseNextLook()
            let read = Task { try await fleet[0].cache.entry(forKey: 5) }
            await clock.paused.wait()
            try await fleet[0].cache.setEntry(CacheEntry(value: "own", storedAt: now), forKey: 5)
            clock.resume()
            #expect(try await read.value == nil)
            // The row is this instance's own write, not another instance's: a fetch (a refresh) after it
            // calls the origin.
            #expect(try await fleet[0].singleFlight.fetch(5) == "value-5-1")
            #expect(calls.value == 1)
        }
    }

    @Test func aReadTheClockShowsInItsFutureIsNotTheReadAFetchFollows() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let clock = ManualCacheClock()
            let fleet = try await Self.instances(2, client: client, clock: clock, calls: calls)
            #expect(try await fleet[0].cache.entry(forKey: 5) == nil)
            // The wall clock is set back an hour, then half an hour passes: the read is half an hour
            // old, far past the lease of 10 seconds, though the clock shows it in the future.
            clock.advance(by: .seconds(-3600))
            clock.advance(by: .seconds(1800))
            try await fleet[1].cache.setEntry(CacheEntry(value: "other", storedAt: clock.now), forKey: 5)
            #expect(try await fleet[0].singleFlight.fetch(5) == "value-5-1")
            #expect(calls.value == 1)
        }
    }

    // MARK: Edge cases that hold

    @Test func aReadJustBeforeTheClockWentBackStillCountsOnceTheClockIsPastIt() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let clock = ManualCacheClock()
            let fleet = try await Self.instances(2, client: client, clock: clock, calls: calls)
            #expect(try await fleet[0].cache.entry(forKey: 5) == nil)
            // Back a second and forward two: the read is a second old on the clock, within the lease.
            clock.advance(by: .seconds(-1))
            clock.advance(by: .seconds(2))
            try await fleet[1].cache.setEntry(CacheEntry(value: "other", storedAt: clock.now), forKey: 5)
            #expect(try await fleet[0].singleFlight.fetch(5) == "other")
            #expect(calls.value == 0)
        }
    }

    @Test func aStoreInvalidationAfterAMissFetchesFromTheOrigin() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let fleet = try await Self.instances(2, client: client, calls: calls)
            let store = fleet[0].stores[5]
            await #expect(throws: StoreFlowableError.self) { try await store.requireData(from: .cache) }
            try await fleet[1].cache.setEntry(CacheEntry(value: "other", storedAt: fleet[1].cache.clock.now), forKey: 5)
            // This instance's invalidation marks the other instance's value, and the store fetches again:
            // the origin, not the value it just invalidated.
            try await store.invalidate()
            #expect(try await store.requireData() == "value-5-1")
            #expect(calls.value == 1)
        }
    }

    @Test func aRefreshAfterInvalidatingOrRemovingEveryEntryFetchesFromTheOrigin() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let fleet = try await Self.instances(2, client: client, calls: calls)
            let now = fleet[0].cache.clock.now
            // Misses of keys 5 and 6 remembered; another instance then writes both.
            #expect(try await fleet[0].cache.entry(forKey: 5) == nil)
            #expect(try await fleet[0].cache.entry(forKey: 6) == nil)
            try await fleet[1].cache.setEntry(CacheEntry(value: "other", storedAt: now), forKey: 5)
            try await fleet[1].cache.setEntry(CacheEntry(value: "other", storedAt: now), forKey: 6)
            // Invalidating every key (none is tracked by the store, so only the cache marks them)...
            try await fleet[0].stores.invalidateAll()
            await fleet[0].stores[5].refresh()
            #expect(calls.value == 1)
            // ... and removing every entry: a refresh then calls the origin, whatever was read before.
            try await fleet[0].cache.removeAllEntries()
            await fleet[0].stores[6].refresh()
            #expect(calls.value == 2)
            #expect(try await fleet[0].stores[6].requireData(from: .cache) == "value-6-2")
        }
    }

    @Test func aStaleReadIsFollowedByItsRevalidationWhichUsesAnotherInstancesRewrite() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let clock = ManualCacheClock()
            let fleet = try await Self.instances(2, client: client, clock: clock, calls: calls)
            // A value that is stale (stored before the cache's clock, whose policy keeps it for ever, is
            // fresh: so invalidate it) read by instance 0, then rewritten fresh by instance 1.
            try await fleet[1].cache.setEntry(CacheEntry(value: "old", storedAt: clock.now), forKey: 5)
            try await fleet[1].cache.invalidateEntry(forKey: 5)
            #expect(try await fleet[0].cache.entry(forKey: 5)?.isInvalidated == true)
            try await fleet[1].cache.setEntry(CacheEntry(value: "new", storedAt: clock.now), forKey: 5)
            #expect(try await fleet[0].singleFlight.fetch(5) == "new")
            #expect(calls.value == 0)
        }
    }

    @Test func pastTheLimitOfRememberedReadsTheyAreAllForgotten() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let fleet = try await Self.instances(2, client: client, calls: calls)
            let now = fleet[0].cache.clock.now
            // 4,096 misses remembered (keys 0 to 4,095); the next key's miss forgets them all first.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        for key in stride(from: worker, to: 4096, by: 4) {
                            _ = try await fleet[0].cache.entry(forKey: key)
                        }
                    }
                }
                try await group.waitForAll()
            }
            // A key already remembered is read again without forgetting the others.
            #expect(try await fleet[0].cache.entry(forKey: 1) == nil)
            #expect(try await fleet[0].cache.entry(forKey: 4096) == nil)
            for key in [0, 1, 4096] {
                try await fleet[1].cache.setEntry(CacheEntry(value: "other", storedAt: now), forKey: key)
            }
            #expect(try await fleet[0].singleFlight.fetch(0) == "value-0-1")
            #expect(try await fleet[0].singleFlight.fetch(1) == "value-1-2")
            #expect(try await fleet[0].singleFlight.fetch(4096) == "other")
            #expect(calls.value == 2)
        }
    }

    @Test func aRememberedReadIsUsedByOneFetchOnly() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let fleet = try await Self.instances(2, client: client, calls: calls)
            #expect(try await fleet[0].cache.entry(forKey: 5) == nil)
            try await fleet[1].cache.setEntry(CacheEntry(value: "other", storedAt: fleet[1].cache.clock.now), forKey: 5)
            #expect(try await fleet[0].singleFlight.fetch(5) == "other")
            // A second fetch with no read before it (a refresh) calls the origin.
            #expect(try await fleet[0].singleFlight.fetch(5) == "value-5-1")
            #expect(calls.value == 1)
        }
    }
}

/// A manual cache clock whose next look (`now`) can be made to block until ``resume()``: it holds a
/// cache call at its first look at the clock, after the statement it ran. The block is a semaphore
/// (at most 30 seconds), as ``RewriteOnce`` does.
final class PausingCacheClock: CacheClock {
    private let clock = ManualCacheClock()
    private let pauseArmed = Mutex(false)
    private let resumed = DispatchSemaphore(value: 0)
    /// Opens when a look has blocked.
    let paused = OpenGate()

    var now: CacheTime {
        let pause = pauseArmed.withLock { armed in
            defer { armed = false }
            return armed
        }
        if pause {
            paused.open()
            _ = resumed.wait(timeout: .now() + 30)
        }
        return clock.now
    }

    /// Makes the next look at the clock block until ``resume()``.
    func pauseNextLook() {
        pauseArmed.withLock { $0 = true }
    }

    /// Lets the blocked look return.
    func resume() {
        resumed.signal()
    }
}
