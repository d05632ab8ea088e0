import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import StoreFlowableTesting
import Synchronization
import Testing

/// `PostgresSingleFlight`: one origin call per key across instances. Each "instance" here is what a
/// process has: its own cache object, single flight and store (with its own manager), on one table; the
/// multi-process tests repeat the burst with separate processes.
@Suite(.timeLimit(.minutes(2)))
struct PostgresSingleFlightTests {
    /// One instance of the fleet.
    struct Instance: Sendable {
        let cache: PostgresCache<Int, String>
        let singleFlight: PostgresSingleFlight<Int, String>
        let stores: KeyedStore<PostgresCache<Int, String>>
    }

    /// Opens `count` instances on the cache `name`, all calling `origin`.
    static func instances(
        _ count: Int, client: PostgresClient, name: String, clock: any CacheClock = SystemCacheClock(),
        lease: Duration = .seconds(30), writeGrace: Duration = .seconds(2),
        events: SingleFlightEventLog = SingleFlightEventLog(), origin: @escaping @Sendable (Int) async throws -> String
    ) async throws -> [Instance] {
        try await PostgresCacheSchema.migrate(name: name, client: client)
        var instances: [Instance] = []
        for _ in 0..<count {
            let cache = try await PostgresCache<Int, String>(name: name, client: client, clock: clock)
            let singleFlight = PostgresSingleFlight(
                cache: cache, lease: lease, writeGrace: writeGrace, checkInterval: .milliseconds(2),
                events: { events.append($0) }, origin: origin)
            instances.append(
                Instance(
                    cache: cache, singleFlight: singleFlight,
                    stores: KeyedStore(cache: cache, fetch: singleFlight.fetch)))
        }
        return instances
    }

    // The leases and write graces of these tests are on a manual clock that does not move: on a busy
    // machine (a CI run at a load of 8), the holder's store could otherwise write more than the write
    // grace after its origin call returned, and a waiter would rightly take the claim over.
    @Test func aBurstOfMissesOnThreeInstancesCallsTheOriginOnce() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let events = SingleFlightEventLog()
            let fleet = try await Self.instances(
                3, client: client, name: uniqueName(), clock: ManualCacheClock(), events: events
            ) { key in
                let call = calls.increment()
                try await Task.sleep(for: .milliseconds(50))  // a slow origin, so that the misses overlap
                return "value-\(key)-\(call)"
            }
            let values = try await withThrowingTaskGroup(of: String.self) { group in
                for caller in 0..<100 {
                    let stores = fleet[caller % 3].stores
                    group.addTask { try await stores[7].requireData() }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(calls.value == 1)
            #expect(Set(values) == ["value-7-1"])
            #expect(events.all.filter { if case .claimed = $0 { true } else { false } }.count == 1)
            // Every claim is gone once the value is written.
            #expect(
                try await scalar(client, "SELECT count(*) FROM storeflowable_claim_\(unescaped: fleet[0].cache.name)")
                    == 0)
        }
    }

    @Test func aFailingHolderReleasesItsClaimAndTheNextInstanceFetchesAtOnce() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let holderStarted = OpenGate()
            let failHolder = OpenGate()
            let fleet = try await Self.instances(2, client: client, name: uniqueName()) { key in
                let call = calls.increment()
                if call == 1 {
                    holderStarted.open()
                    await failHolder.wait()
                    throw OriginDown()
                }
                return "value-\(call)"
            }
            let holder = Task { try await fleet[0].singleFlight.fetch(1) }
            await holderStarted.wait()
            let waiter = Task { try await fleet[1].singleFlight.fetch(1) }
            // The waiter waits for the claim (a lease of 30 s): the origin is not called again meanwhile.
            for _ in 0..<20 { await Task.yield() }
            #expect(calls.value == 1)
            failHolder.open()
            await #expect(throws: OriginDown.self) { try await holder.value }
            #expect(try await waiter.value == "value-2")
        }
    }

    @Test func aCancelledHolderReleasesItsClaim() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let holderStarted = OpenGate()
            let fleet = try await Self.instances(2, client: client, name: uniqueName()) { _ in
                let call = calls.increment()
                if call == 1 {
                    holderStarted.open()
                    try await Task.sleep(for: .seconds(3600))
                }
                return "value-\(call)"
            }
            let holder = Task { try await fleet[0].singleFlight.fetch(1) }
            await holderStarted.wait()
            let waiter = Task { try await fleet[1].singleFlight.fetch(1) }
            holder.cancel()
            await #expect(throws: CancellationError.self) { try await holder.value }
            #expect(try await waiter.value == "value-2")
        }
    }

    @Test func aDeadHoldersClaimIsTakenOverOnceItsLeaseEnds() async throws {
        try await withClient { client in
            let clock = ManualCacheClock()
            let events = SingleFlightEventLog()
            let name = uniqueName()
            let fleet = try await Self.instances(
                1, client: client, name: name, clock: clock, lease: .seconds(10), events: events
            ) {
                "value-\($0)"
            }
            // A claim left by an instance that died mid-fetch, its lease ending in 10 s.
            let expires = clock.now.advanced(by: .seconds(10)).nanosecondsSince1970
            try await execute(
                client,
                "INSERT INTO storeflowable_claim_\(unescaped: name) (key, holder, expires_at) VALUES ('\\x31'::bytea, 'dead', \(expires))"
            )
            let waiter = Task { try await fleet[0].stores[1].requireData() }
            for _ in 0..<50 { await Task.yield() }
            #expect(!events.all.contains(.tookOverExpiredClaim(key: "1")))
            clock.advance(by: .seconds(10))
            #expect(try await waiter.value == "value-1")
            #expect(events.all.contains(.tookOverExpiredClaim(key: "1")))
        }
    }

    @Test func aHolderWhoseStoreNeverWritesKeepsTheClaimOnlyForTheWriteGrace() async throws {
        try await withClient { client in
            let clock = ManualCacheClock()
            let calls = CallCounter()
            let fleet = try await Self.instances(
                2, client: client, name: uniqueName(), clock: clock, writeGrace: .seconds(2)
            ) {
                _ in "value-\(calls.increment())"
            }
            // Called directly: nothing writes the value, as when the store's fetch was superseded.
            #expect(try await fleet[0].singleFlight.fetch(1) == "value-1")
            let waiter = Task { try await fleet[1].singleFlight.fetch(1) }
            for _ in 0..<50 { await Task.yield() }
            #expect(calls.value == 1)
            clock.advance(by: .seconds(2))
            #expect(try await waiter.value == "value-2")
        }
    }

    @Test func aWaiterUsesTheValueTheHoldersStoreWrote() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let release = OpenGate()
            let holderStarted = OpenGate()
            let events = SingleFlightEventLog()
            let fleet = try await Self.instances(
                2, client: client, name: uniqueName(), clock: ManualCacheClock(), events: events
            ) { key in
                let call = calls.increment()
                holderStarted.open()
                await release.wait()
                return "value-\(key)-\(call)"
            }
            let holder = Task { try await fleet[0].stores[3].requireData() }
            await holderStarted.wait()
            let waiter = Task { try await fleet[1].stores[3].requireData() }
            while !events.all.contains(.waiting(key: "3")), !Task.isCancelled { await Task.yield() }
            release.open()
            #expect(try await holder.value == "value-3-1")
            #expect(try await waiter.value == "value-3-1")
            #expect(calls.value == 1)
            #expect(events.all.contains(.usedValueOfOtherInstance(key: "3")))
        }
    }

    @Test func aFetchThatClaimsOnlyAfterTheHoldersWriteUsesTheWrittenValue() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let events = SingleFlightEventLog()
            let fleet = try await Self.instances(
                2, client: client, name: uniqueName(), clock: ManualCacheClock(), events: events
            ) { key in
                "value-\(key)-\(calls.increment())"
            }
            // Instance 1's store reads the miss, then (a busy machine) its fetch claims only after
            // instance 0's whole fetch: origin call, write, claim released.
            #expect(try await fleet[1].cache.entry(forKey: 5) == nil)
            #expect(try await fleet[0].stores[5].requireData() == "value-5-1")
            #expect(try await fleet[1].singleFlight.fetch(5) == "value-5-1")
            #expect(calls.value == 1)
            #expect(events.all.contains(.usedValueOfOtherInstance(key: "5")))
            #expect(
                try await scalar(client, "SELECT count(*) FROM storeflowable_claim_\(unescaped: fleet[0].cache.name)")
                    == 0)
        }
    }

    @Test func aFetchAfterTheInstancesOwnWriteCallsTheOrigin() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let fleet = try await Self.instances(1, client: client, name: uniqueName(), clock: ManualCacheClock()) {
                key in "value-\(key)-\(calls.increment())"
            }
            // A read of the miss, then this instance's own write: the write is not another instance's,
            // so a fetch (a refresh) afterwards calls the origin.
            #expect(try await fleet[0].cache.entry(forKey: 5) == nil)
            try await fleet[0].cache.setEntry(
                CacheEntry(value: "written", storedAt: fleet[0].cache.clock.now), forKey: 5)
            #expect(try await fleet[0].singleFlight.fetch(5) == "value-5-1")
            #expect(calls.value == 1)
        }
    }

    @Test func aReadOlderThanTheLeaseIsNotTheReadAFetchFollows() async throws {
        try await withClient { client in
            let clock = ManualCacheClock()
            let calls = CallCounter()
            let fleet = try await Self.instances(
                2, client: client, name: uniqueName(), clock: clock, lease: .seconds(10)
            ) {
                key in "value-\(key)-\(calls.increment())"
            }
            #expect(try await fleet[0].cache.entry(forKey: 5) == nil)
            try await fleet[1].cache.setEntry(CacheEntry(value: "other", storedAt: clock.now), forKey: 5)
            clock.advance(by: .seconds(11))
            #expect(try await fleet[0].singleFlight.fetch(5) == "value-5-1")
            #expect(calls.value == 1)
        }
    }

    @Test func aValueReadFreshIsNotRememberedAndAnInvalidatedOneIs() async throws {
        try await withClient { client in
            let calls = CallCounter()
            let fleet = try await Self.instances(2, client: client, name: uniqueName(), clock: ManualCacheClock()) {
                key in "value-\(key)-\(calls.increment())"
            }
            let now = fleet[0].cache.clock.now
            // A fresh read is a hit: a fetch after it (a refresh) calls the origin even though another
            // instance rewrote the key since.
            try await fleet[1].cache.setEntry(CacheEntry(value: "first", storedAt: now), forKey: 5)
            #expect(try await fleet[0].cache.entry(forKey: 5)?.value == "first")
            try await fleet[1].cache.setEntry(CacheEntry(value: "second", storedAt: now), forKey: 5)
            #expect(try await fleet[0].singleFlight.fetch(5) == "value-5-1")
            // An invalidated read is what a fetch follows: another instance's fresh rewrite since is used.
            try await fleet[1].cache.setEntry(CacheEntry(value: "stale", storedAt: now), forKey: 6)
            try await fleet[1].cache.invalidateEntry(forKey: 6)
            #expect(try await fleet[0].cache.entry(forKey: 6)?.isInvalidated == true)
            try await fleet[1].cache.setEntry(CacheEntry(value: "rewritten", storedAt: now), forKey: 6)
            #expect(try await fleet[0].singleFlight.fetch(6) == "rewritten")
            #expect(calls.value == 1)
        }
    }

    @Test func withoutTheDatabaseEveryInstanceFetchesOnItsOwn() async throws {
        let server = try await TestPostgresServer.launch()
        try await withClient(server) { client in
            let events = SingleFlightEventLog()
            let calls = CallCounter()
            try await PostgresCacheSchema.migrate(name: "outage", client: client)
            let cache = try await openWithShortTimeout(client, name: "outage", timeout: .milliseconds(500))
            let singleFlight = PostgresSingleFlight(cache: cache, events: { events.append($0) }) { _ in
                "value-\(calls.increment())"
            }
            try await server.stop()
            #expect(try await singleFlight.fetch(1) == "value-1")
            #expect(events.all.contains { if case .claimUnavailable = $0 { true } else { false } })
            try await server.start()
        }
    }

    @Test func aCancelledWaiterReturnsAtOnce() async throws {
        try await withClient { client in
            let holderStarted = OpenGate()
            let fleet = try await Self.instances(2, client: client, name: uniqueName()) { _ in
                holderStarted.open()
                try await Task.sleep(for: .seconds(3600))
                return "never"
            }
            let holder = Task { try await fleet[0].singleFlight.fetch(1) }
            await holderStarted.wait()
            let waiter = Task { try await fleet[1].singleFlight.fetch(1) }
            for _ in 0..<20 { await Task.yield() }
            waiter.cancel()
            await #expect(throws: CancellationError.self) { try await waiter.value }
            holder.cancel()
            _ = try? await holder.value
        }
    }
}

/// Counts calls from any task.
final class CallCounter: Sendable {
    private let count = Mutex(0)

    /// Adds one and returns the new count.
    func increment() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }

    var value: Int { count.withLock { $0 } }
}

/// The events of single flights, in order.
final class SingleFlightEventLog: Sendable {
    private let events = Mutex<[PostgresSingleFlightEvent]>([])

    func append(_ event: PostgresSingleFlightEvent) {
        events.withLock { $0.append(event) }
    }

    var all: [PostgresSingleFlightEvent] { events.withLock { $0 } }
}

/// The origin's failure.
struct OriginDown: Error {}

/// A one-time gate: `wait()` returns once `open()` was called (at once if it already was).
final class OpenGate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
