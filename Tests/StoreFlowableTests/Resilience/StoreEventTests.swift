import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// The exact events each read and fetch reports.
@Suite("Store events", .timeLimit(.minutes(1)))
struct StoreEventTests {
    private struct Failure: Error {}

    /// A keyed store over a memory cache on a manual cache clock, fresh for 10 s, stale-while-revalidate
    /// for 10 s more and stale-if-error for 20 s more, with an event recorder.
    private struct Fixture {
        let cacheClock = ManualCacheClock()
        let events = StoreEventRecorder()
        let fetches = LockedValue(0)
        let store: KeyedStore<MemoryCache<Int, String>>

        init(
            staleWhileRevalidate: Duration? = nil, staleIfError: Duration? = nil,
            fetch: @escaping @Sendable (Int) throws -> String = { "fetched \($0)" }
        ) {
            let policy = FreshnessPolicy(
                freshFor: .seconds(10), staleWhileRevalidate: staleWhileRevalidate, staleIfError: staleIfError)
            let fetches = fetches
            store = KeyedStore(
                cache: MemoryCache(policy: policy, clock: cacheClock),
                manager: FlowableDataStateManager(fetchPolicy: FetchPolicy(clock: ManualClock()), observer: events)
            ) { key in
                fetches.withLock { $0 += 1 }
                return try fetch(key)
            }
        }

        var summary: [String] { events.events.map { RetryFixture.summary(of: $0.kind) } }
    }

    @Test func aMissFetchesAndAFreshReadHits() async throws {
        let fixture = Fixture()
        _ = try await fixture.store[1].requireData()
        _ = try await fixture.store[1].requireData()
        #expect(fixture.summary == ["miss", "started 1", "succeeded 1 0ms", "hit fresh"])
        #expect(fixture.events.events.allSatisfy { $0.key as? Int == 1 && $0.dataType == String.self })
    }

    @Test func aStaleValueInsideTheRevalidateWindowIsServedAndRefreshed() async throws {
        let fixture = Fixture(staleWhileRevalidate: .seconds(10))
        _ = try await fixture.store[1].requireData()
        fixture.cacheClock.advance(by: .seconds(15))
        fixture.events.removeAll()
        #expect(try await fixture.store[1].requireData() == "fetched 1")
        await fixture.events.waitForEvents(4)
        #expect(
            fixture.summary == [
                "hit staleWhileRevalidate", "stale served revalidating", "started 1", "succeeded 1 0ms",
            ])
    }

    @Test func aStaleValueInsideTheErrorWindowStandsInForAFailedFetch() async throws {
        let failing = LockedValue(false)
        let fixture = Fixture(staleIfError: .seconds(20)) { key in
            if failing.withLock({ $0 }) { throw Failure() }
            return "fetched \(key)"
        }
        _ = try await fixture.store[1].requireData()
        fixture.cacheClock.advance(by: .seconds(15))
        failing.withLock { $0 = true }
        fixture.events.removeAll()
        #expect(try await fixture.store[1].requireData() == "fetched 1")
        #expect(fixture.summary == ["miss staleIfError", "started 1", "failed 1 0ms", "stale served on error"])
    }

    @Test func aCallerArrivingDuringAFetchJoinsIt() async throws {
        let gate = Gate()
        let events = StoreEventRecorder()
        // A clock nobody moves: the fetch's duration is exactly zero.
        let manager = FlowableDataStateManager<Int>(fetchPolicy: FetchPolicy(clock: ManualClock()), observer: events)
        let store = KeyedStore(cache: MemoryCache<Int, String>(), manager: manager) { key in
            await gate.wait()
            return "fetched \(key)"
        }
        let first = Task { try await store[1].requireData() }
        await gate.arrived()
        let second = Task { try await store[1].requireData() }
        await events.waitForEvents(4)
        gate.open()
        #expect(try await first.value == "fetched 1")
        #expect(try await second.value == "fetched 1")
        #expect(
            events.events.map { RetryFixture.summary(of: $0.kind) } == [
                "miss", "started 1", "miss", "joined", "succeeded 1 0ms",
            ])
    }

    @Test func anUnreadableCacheIsReportedAndCountsAsAMiss() async throws {
        let events = StoreEventRecorder()
        let cache = InMemoryCache<String>()
        cache.failReads(with: Failure())
        let origin = ScriptedOrigin<String>([.success("value")])
        let manager = FlowableDataStateManager<Int>(observer: events)
        let store = TestStoreCallback(key: 1, manager: manager, cache: cache, origin: origin).create()
        _ = try await store.requireData()
        #expect(events.events.map { RetryFixture.summary(of: $0.kind) }.prefix(2) == ["read failed", "miss"])
    }

    @Test func anInvalidationIsReported() async throws {
        let fixture = Fixture()
        _ = try await fixture.store[1].requireData()
        fixture.events.removeAll()
        try await fixture.store[1].invalidate()
        #expect(fixture.summary == ["invalidated"])
    }

    @Test func aSubscriptionsFirstReadIsReported() async throws {
        let fixture = Fixture()
        _ = try await fixture.store[1].requireData()
        fixture.events.removeAll()
        let recorder = StateRecorder(fixture.store[1].publish())
        try await recorder.waitForLatest { $0.content != nil }
        #expect(fixture.summary == ["hit fresh"])
        recorder.cancel()
    }
}
