import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// `MemoryCache`'s invalidation: one key in place, or every key a predicate chooses, where the predicate
/// runs under no lock and a write racing it wins over the invalidation.
struct MemoryCacheInvalidationTests {
    let clock = ManualCacheClock()

    @Test func invalidatingOneKeyMarksItInPlace() {
        let cache = MemoryCache<String, Int>(countLimit: 10, clock: clock)
        cache.setValue(1, forKey: "a", cost: 3)
        cache["b"] = 2
        clock.advance(by: .seconds(5))
        cache.invalidateEntry(forKey: "a")
        cache.invalidateEntry(forKey: "missing")
        #expect(cache.peekEntry("a") == CacheEntry(value: 1, storedAt: manualClockStart, isInvalidated: true))
        #expect(cache.peekEntry("b")?.isInvalidated == false)
        #expect(cache.totalCost == 3)
        #expect(cache.count == 2)
        #expect(cache.keysByRecency == ["b", "a"])
        cache.invalidateEntry(forKey: "a")  // twice is once
        #expect(cache.peekEntry("a")?.isInvalidated == true)
        cache["a"] = 10  // a write replaces the mark
        #expect(cache.entry(forKey: "a")?.isInvalidated == false)
    }

    @Test func aPredicateMarksExactlyTheKeysItChooses() {
        let cache = MemoryCache<Int, Int>(clock: clock)
        for key in 0..<20 { cache[key] = key }
        let asked = LockedLog<Int>()
        cache.invalidateEntries { key in
            asked.append(key)
            return key % 3 == 0
        }
        #expect(asked.all.sorted() == Array(0..<20))
        for key in 0..<20 {
            #expect(cache.peekEntry(key)?.isInvalidated == (key % 3 == 0))
            #expect(cache.peekEntry(key)?.value == key)
        }
        #expect(cache.keysByRecency == Array((0..<20).reversed()))
    }

    @Test func aWriteRacingThePredicateWinsOverTheInvalidation() {
        let cache = MemoryCache<String, Int>(clock: clock)
        for key in ["replaced", "rewritten", "removed", "readded", "kept"] { cache[key] = 0 }
        // The predicate runs under no lock: it can write the cache while the invalidation is under way,
        // as another thread could.
        cache.invalidateEntries { key in
            switch key {
            case "replaced": cache["replaced"] = 1
            case "rewritten": cache.setEntry(CacheEntry(value: 0, storedAt: manualClockStart), forKey: "rewritten")
            case "removed": cache["removed"] = nil
            case "readded":
                cache["readded"] = nil
                cache["readded"] = 2
            default: cache["new"] = 3
            }
            return true
        }
        #expect(cache.peekEntry("replaced") == CacheEntry(value: 1, storedAt: manualClockStart))
        #expect(cache.peekEntry("rewritten") == CacheEntry(value: 0, storedAt: manualClockStart))
        #expect(cache.peekEntry("removed") == nil)
        #expect(cache.peekEntry("readded") == CacheEntry(value: 2, storedAt: manualClockStart))
        #expect(cache.peekEntry("kept") == CacheEntry(value: 0, storedAt: manualClockStart, isInvalidated: true))
        #expect(cache.peekEntry("new") == CacheEntry(value: 3, storedAt: manualClockStart))
        #expect(cache.invariantViolations.isEmpty)
    }

    @Test func aPredicateMayReadTheCache() {
        let cache = MemoryCache<Int, Int>(clock: clock)
        for key in 0..<10 { cache[key] = key * 10 }
        cache.invalidateEntries { key in (cache[key] ?? 0) >= 50 }
        for key in 0..<10 { #expect(cache.peekEntry(key)?.isInvalidated == (key >= 5)) }
    }

    @Test(.timeLimit(.minutes(1)))
    func concurrentWritesRacingPredicateInvalidationsStayConsistent() async {
        let cache = MemoryCache<Int, Int>(countLimit: 50, clock: clock)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var random = CacheTestRandom(seed: UInt64(task))
                    for round in 0..<2_000 {
                        let key = random.below(64)
                        if task == 0 && round % 20 == 0 {
                            cache.invalidateEntries { $0 % 2 == 0 }
                        } else {
                            cache[key] = round
                        }
                    }
                }
            }
        }
        #expect(cache.invariantViolations.isEmpty)
        // Only even keys can carry the mark.
        for key in stride(from: 1, to: 64, by: 2) { #expect(cache.peekEntry(key)?.isInvalidated != true) }
    }
}
