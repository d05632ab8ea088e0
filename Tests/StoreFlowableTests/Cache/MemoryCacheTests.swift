import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// `MemoryCache`'s API: values and entries, recency, the count and cost limits, removal and sizes.
struct MemoryCacheTests {
    let clock = ManualCacheClock()

    @Test func theSubscriptReadsWritesAndRemoves() {
        let cache = MemoryCache<String, Int>(clock: clock)
        #expect(cache["a"] == nil)
        cache["a"] = 1
        cache["b"] = 2
        #expect(cache["a"] == 1)
        #expect(cache.value(forKey: "b") == 2)
        cache["a"] = 3
        #expect(cache["a"] == 3)
        #expect(cache.count == 2)
        cache["a"] = nil
        #expect(cache["a"] == nil)
        #expect(cache.count == 1)
        #expect(cache.invariantViolations.isEmpty)
    }

    @Test func aWriteStampsTheClocksTimeAndClearsTheMark() {
        let cache = MemoryCache<String, Int>(clock: clock)
        cache.setValue(1, forKey: "a")
        #expect(cache.entry(forKey: "a") == CacheEntry(value: 1, storedAt: manualClockStart))
        cache.invalidateEntry(forKey: "a")
        clock.advance(by: .seconds(3))
        cache["a"] = 2
        #expect(cache.entry(forKey: "a") == CacheEntry(value: 2, storedAt: manualClockStart.advanced(by: .seconds(3))))
    }

    @Test func setEntryKeepsTheGivenTimestampAndMark() {
        let cache = MemoryCache<String, Int>(clock: clock)
        let old = CacheEntry(value: 1, storedAt: manualClockStart.advanced(by: .seconds(-60)), isInvalidated: true)
        cache.setEntry(old, forKey: "a")
        #expect(cache.entry(forKey: "a") == old)
        let future = CacheEntry(value: 2, storedAt: manualClockStart.advanced(by: .seconds(60)))
        cache.setEntry(future, forKey: "b", cost: 4)
        #expect(cache.entry(forKey: "b") == future)
        #expect(cache.totalCost == 4)
    }

    @Test func evictionFollowsRecencyAndReadsCountAsUse() {
        let cache = MemoryCache<String, Int>(countLimit: 3, clock: clock)
        cache["a"] = 1
        cache["b"] = 2
        cache["c"] = 3
        _ = cache["a"]  // b is now the least recently used
        _ = cache.entry(forKey: "b")  // c is now
        cache["d"] = 4
        #expect(cache.keysByRecency == ["d", "b", "a"])
        cache["b"] = 20  // a write is a use too: a is the least recently used
        cache["e"] = 5
        #expect(cache.keysByRecency == ["e", "b", "d"])
        #expect(cache["a"] == nil)
        #expect(cache["c"] == nil)
    }

    @Test func aMissOrAnInvalidationIsNotAUse() {
        let cache = MemoryCache<String, Int>(countLimit: 2, clock: clock)
        cache["a"] = 1
        cache["b"] = 2
        _ = cache["z"]
        cache.invalidateEntry(forKey: "a")
        cache.invalidateEntries { $0 == "a" }
        #expect(cache.keysByRecency == ["b", "a"])
        cache["c"] = 3
        #expect(cache.keysByRecency == ["c", "b"])
    }

    @Test func theCountLimitKeepsTheMostRecentEntries() {
        let cache = MemoryCache<Int, Int>(countLimit: 10, clock: clock)
        for key in 0..<100 { cache[key] = key }
        #expect(cache.count == 10)
        #expect(cache.keysByRecency == Array((90..<100).reversed()))
        #expect(cache.countLimit == 10)
        #expect(cache.costLimit == nil)
        #expect(cache.invariantViolations.isEmpty)
    }

    @Test func theCostLimitEvictsLeastRecentlyUsedUntilTheNewEntryFits() {
        let cache = MemoryCache<String, Int>(costLimit: 10, clock: clock)
        cache.setValue(1, forKey: "a", cost: 3)
        cache.setValue(2, forKey: "b", cost: 3)
        cache.setValue(3, forKey: "c", cost: 3)
        _ = cache["a"]
        cache.setValue(4, forKey: "d", cost: 5)  // evicts b, then c: a was used
        #expect(cache.keysByRecency == ["d", "a"])
        #expect(cache.totalCost == 8)
        cache.setValue(5, forKey: "a", cost: 1)  // replacing a frees its cost first
        #expect(cache.keysByRecency == ["a", "d"])
        #expect(cache.totalCost == 6)
        #expect(cache.invariantViolations.isEmpty)
    }

    @Test func bothLimitsHoldAtOnce() {
        let cache = MemoryCache<Int, Int>(countLimit: 3, costLimit: 10, clock: clock)
        cache.setValue(0, forKey: 0, cost: 0)
        cache.setValue(1, forKey: 1, cost: 0)
        cache.setValue(2, forKey: 2, cost: 9)
        cache.setValue(3, forKey: 3, cost: 0)  // the count limit evicts 0
        #expect(cache.keysByRecency == [3, 2, 1])
        cache.setValue(4, forKey: 4, cost: 2)  // the cost limit evicts 1 (cost 0) and 2
        #expect(cache.keysByRecency == [4, 3])
        #expect(cache.totalCost == 2)
    }

    @Test func anOversizeEntryIsNotStoredRemovesItsKeyAndEvictsNothingElse() {
        let cache = MemoryCache<String, Int>(costLimit: 10, clock: clock)
        cache.setValue(1, forKey: "a", cost: 4)
        cache.setValue(2, forKey: "b", cost: 4)
        cache.setValue(3, forKey: "c", cost: 11)
        #expect(cache["c"] == nil)
        #expect(cache.keysByRecency == ["b", "a"])
        #expect(cache.totalCost == 8)
        cache.setValue(4, forKey: "a", cost: 11)  // the key's old value must not survive
        #expect(cache["a"] == nil)
        #expect(cache.keysByRecency == ["b"])
        #expect(cache.totalCost == 4)
        let zero = MemoryCache<String, Int>(countLimit: 0, clock: clock)
        zero["a"] = 1
        #expect(zero["a"] == nil)
        #expect(zero.count == 0)
    }

    @Test func zeroCostsNeverEvictTheNewEntry() {
        let cache = MemoryCache<Int, Int>(countLimit: 2, costLimit: 0, clock: clock)
        for key in 0..<5 {
            cache[key] = key
            #expect(cache[key] == key)
        }
        #expect(cache.keysByRecency == [4, 3])
        #expect(cache.totalCost == 0)
    }

    @Test func removalAndSizes() {
        let cache = MemoryCache<String, Int>(clock: clock)
        cache.setValue(1, forKey: "a", cost: 2)
        cache.setValue(2, forKey: "b", cost: 3)
        cache.setValue(3, forKey: "c", cost: 4)
        #expect(cache.count == 3)
        #expect(cache.totalCost == 9)
        #expect(cache.removeValue(forKey: "a") == 1)
        #expect(cache.removeValue(forKey: "a") == nil)
        cache.removeEntry(forKey: "b")
        cache.removeEntry(forKey: "z")
        #expect(cache.count == 1)
        #expect(cache.totalCost == 4)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        cache["d"] = 4
        cache.removeAllEntries()
        #expect(cache["d"] == nil)
        #expect(cache.count == 0)
        cache["e"] = 5
        #expect(cache.keysByRecency == ["e"])
        #expect(cache.invariantViolations.isEmpty)
    }

    @Test func theProtocolReturnsThePolicyAndTheClock() {
        let policy = FreshnessPolicy(freshFor: .seconds(5), staleIfError: .seconds(10))
        let cache = MemoryCache<String, Int>(policy: policy, clock: clock)
        #expect(cache.policy == policy)
        #expect((cache.clock as? ManualCacheClock) === clock)
        let defaults = MemoryCache<String, Int>()
        #expect(defaults.policy == .forever)
        #expect(defaults.clock is SystemCacheClock)
    }

    @Test(.timeLimit(.minutes(1)))
    func itWorksThroughTheAsyncProtocol() async throws {
        let cache = MemoryCache<String, Int>(policy: FreshnessPolicy(freshFor: .seconds(5)), clock: clock)
        let keyed: any KeyedCache<String, Int> = cache
        try await keyed.setEntry(CacheEntry(value: 1, storedAt: clock.now), forKey: "a")
        try await keyed.setEntry(CacheEntry(value: 2, storedAt: clock.now), forKey: "b")
        #expect(try await keyed.entry(forKey: "a")?.value == 1)
        try await keyed.invalidateEntry(forKey: "a")
        #expect(try await keyed.entry(forKey: "a")?.isInvalidated == true)
        try await keyed.invalidateEntries { $0 == "b" }
        #expect(try await keyed.entry(forKey: "b")?.isInvalidated == true)
        if let entry = try await keyed.entry(forKey: "b") { #expect(keyed.freshness(of: entry) == .stale) }
        try await keyed.removeEntry(forKey: "a")
        #expect(try await keyed.entry(forKey: "a") == nil)
        try await keyed.removeAllEntries()
        #expect(cache.count == 0)
    }
}
