import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// `MemoryCache`'s time to live: entries past the policy's lifetime are dropped on read, at the exact
/// boundary; a read never changes an entry's age; a clock going backwards does not expire anything.
struct MemoryCacheFreshnessTests {
    /// Fresh for 10 s, then usable on error for 20 s more: a lifetime of 30 s.
    static let policy = FreshnessPolicy(freshFor: .seconds(10), staleIfError: .seconds(20))
    static let lifetime = Duration.seconds(30)

    let clock = ManualCacheClock()

    func makeCache() -> MemoryCache<String, Int> {
        MemoryCache(policy: Self.policy, clock: clock)
    }

    @Test(arguments: [
        (Duration.zero, true),
        (MemoryCacheFreshnessTests.lifetime - .nanoseconds(1), true),
        (MemoryCacheFreshnessTests.lifetime, false),
        (MemoryCacheFreshnessTests.lifetime + .nanoseconds(1), false),
        (.seconds(1_000_000_000), false),
    ])
    func anEntryLivesUntilExactlyItsLifetime(age: Duration, isKept: Bool) {
        let cache = makeCache()
        cache["a"] = 1
        clock.advance(by: age)
        #expect((cache["a"] != nil) == isKept)
        #expect(cache.count == (isKept ? 1 : 0))
        // An expired entry stays gone; a kept one stays kept.
        #expect((cache.entry(forKey: "a") != nil) == isKept)
    }

    @Test func maxAgeBoundsTheLifetime() {
        let cache = MemoryCache<String, Int>(
            policy: FreshnessPolicy(freshFor: .seconds(10), staleIfError: .seconds(100), maxAge: .seconds(15)),
            clock: clock)
        cache["a"] = 1
        clock.advance(by: .seconds(15) - .nanoseconds(1))
        #expect(cache["a"] == 1)
        clock.advance(by: .nanoseconds(1))
        #expect(cache["a"] == nil)
    }

    @Test func everyReadPathDropsAnExpiredEntry() {
        let cache = makeCache()
        for key in ["value", "entry", "subscript"] { cache.setValue(1, forKey: key, cost: 2) }
        clock.advance(by: Self.lifetime)
        #expect(cache.count == 3)  // nobody read them yet
        #expect(cache.totalCost == 6)
        #expect(cache.value(forKey: "value") == nil)
        #expect(cache.entry(forKey: "entry") == nil)
        #expect(cache["subscript"] == nil)
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(cache.invariantViolations.isEmpty)
    }

    @Test func anEntryCopiedWithAnOldTimestampExpiresByThatTimestamp() {
        let cache = makeCache()
        let stamped = clock.now.advanced(by: .seconds(1) - Self.lifetime)
        cache.setEntry(CacheEntry(value: 1, storedAt: stamped), forKey: "a")
        #expect(cache.entry(forKey: "a")?.storedAt == stamped)
        clock.advance(by: .seconds(1))
        #expect(cache["a"] == nil)
    }

    @Test func theClockGoingBackwardsKeepsTheEntryAsStaleContent() {
        let cache = makeCache()
        cache["a"] = 1
        clock.advance(by: .seconds(-3_600))
        let entry = cache.entry(forKey: "a")
        #expect(entry == CacheEntry(value: 1, storedAt: manualClockStart))
        if let entry { #expect(cache.freshness(of: entry) == .stale) }
        // Back to normal, the entry's age counts from its own timestamp again.
        clock.set(to: manualClockStart.advanced(by: Self.lifetime - .nanoseconds(1)))
        #expect(cache["a"] == 1)
        clock.advance(by: .nanoseconds(1))
        #expect(cache["a"] == nil)
    }

    @Test func readsNeverChangeTheTimestampOrTheMark() {
        let cache = makeCache()
        cache["a"] = 1
        cache.invalidateEntry(forKey: "a")
        for _ in 0..<29 {
            clock.advance(by: .seconds(1))
            #expect(cache.entry(forKey: "a") == CacheEntry(value: 1, storedAt: manualClockStart, isInvalidated: true))
            #expect(cache["a"] == 1)
        }
        clock.advance(by: .seconds(1))
        #expect(cache["a"] == nil)
    }

    @Test func aForeverPolicyNeverExpiresAnything() {
        let cache = MemoryCache<String, Int>(clock: clock)
        cache["a"] = 1
        clock.set(to: .distantFuture)
        #expect(cache["a"] == 1)
        clock.set(to: .distantPast)
        #expect(cache["a"] == 1)
    }

    @Test func freshnessFollowsThePolicyWindows() {
        let cache = makeCache()
        cache["a"] = 1
        func freshness() -> Freshness? { cache.entry(forKey: "a").map { cache.freshness(of: $0) } }
        #expect(freshness() == .fresh)
        clock.advance(by: .seconds(10))
        #expect(freshness() == .staleIfError)
        clock.advance(by: .seconds(20))
        #expect(freshness() == nil)
    }
}
