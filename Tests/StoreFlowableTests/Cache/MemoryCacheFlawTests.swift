import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// One test per flaw of the caches StoreFlowable's `MemoryCache` replaces, named after what it guards:
/// Loadability's memory cache never checked expiry on read, rewrote an entry on every hit (pushing its
/// expiry forward) and keyed entries by `Key.id`; NSCache may evict the entry just inserted when costs
/// are 0; a cache that evicts "old" entries without counting reads as use evicts hot entries.
struct MemoryCacheFlawTests {
    let clock = ManualCacheClock()

    /// Two keys that are different but share an `id`, like two accounts in different regions.
    struct Account: Hashable, Sendable, Identifiable {
        let id: Int
        let region: String
    }

    @Test func expiredEntryIsNeverReturned() {
        let policy = FreshnessPolicy(freshFor: .zero, maxAge: .seconds(60))
        let cache = MemoryCache<String, Int>(policy: policy, clock: clock)
        cache["a"] = 1
        clock.advance(by: .seconds(60))
        #expect(cache.entry(forKey: "a") == nil)
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache["a"] == nil)
        #expect(cache.count == 0)
    }

    @Test func readDoesNotExtendExpiry() {
        let cache = MemoryCache<String, Int>(policy: FreshnessPolicy(freshFor: .seconds(60)), clock: clock)
        cache["a"] = 1
        for _ in 0..<59 {
            clock.advance(by: .seconds(1))
            #expect(cache["a"] == 1)
        }
        #expect(cache.entry(forKey: "a")?.storedAt == manualClockStart)
        clock.advance(by: .seconds(1))  // 60 s after the write, however often it was read
        #expect(cache["a"] == nil)
    }

    @Test func keysWithEqualIdentifiersDoNotCollide() {
        let cache = MemoryCache<Account, String>(clock: clock)
        let europe = Account(id: 1, region: "eu")
        let america = Account(id: 1, region: "us")
        cache[europe] = "Ada"
        cache[america] = "Grace"
        #expect(cache[europe] == "Ada")
        #expect(cache[america] == "Grace")
        #expect(cache.count == 2)
        cache.invalidateEntry(forKey: europe)
        #expect(cache.entry(forKey: america)?.isInvalidated == false)
        cache[europe] = nil
        #expect(cache[america] == "Grace")
    }

    @Test func insertWithZeroCostKeepsTheNewEntry() {
        let cache = MemoryCache<Int, Int>(countLimit: 1, costLimit: 0, clock: clock)
        for key in 0..<100 {
            cache.setValue(key, forKey: key, cost: 0)
            #expect(cache[key] == key)
            #expect(cache.count == 1)
        }
        let costly = MemoryCache<Int, Int>(costLimit: 5, clock: clock)
        costly.setValue(0, forKey: 0, cost: 5)
        costly.setValue(1, forKey: 1, cost: 0)  // fits beside the full cost: nothing is evicted
        #expect(costly.keysByRecency == [1, 0])
        costly.setValue(2, forKey: 2, cost: 5)  // evicts only what it must: 0, not the newer 1
        #expect(costly.keysByRecency == [2, 1])
    }

    @Test func readUpdatesRecency() {
        let cache = MemoryCache<String, Int>(countLimit: 2, clock: clock)
        cache["hot"] = 1
        cache["cold"] = 2
        #expect(cache["hot"] == 1)
        cache["new"] = 3
        #expect(cache["hot"] == 1)
        #expect(cache["cold"] == nil)
        #expect(cache.entry(forKey: "new") != nil)
        cache["newer"] = 4
        #expect(cache["hot"] == nil)
        #expect(cache.keysByRecency == ["newer", "new"])
    }
}
