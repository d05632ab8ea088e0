import Testing

@testable import StoreFlowable

/// `LRUStorage`, the pure value inside `MemoryCache`, tested directly: recency, limits, what each
/// operation hands back for release, slot reuse and write numbers.
struct MemoryCacheLRUStorageTests {
    typealias Storage = LRUStorage<String, Int>

    let now = CacheTime(nanosecondsSince1970: 1_000_000_000_000)

    func entry(_ value: Int) -> CacheEntry<Int> { CacheEntry(value: value, storedAt: now) }

    func storage(countLimit: Int? = nil, costLimit: Int? = nil, policy: FreshnessPolicy = .forever) -> Storage {
        Storage(countLimit: countLimit, costLimit: costLimit, policy: policy)
    }

    @Test func emptyStorageIsConsistent() {
        let storage = storage()
        #expect(storage.count == 0)
        #expect(storage.totalCost == 0)
        #expect(storage.keysByRecency.isEmpty)
        #expect(storage.invariantViolations().isEmpty)
    }

    @Test func insertsAreNewestAndHitsMoveToNewest() {
        var storage = storage()
        for (value, key) in ["a", "b", "c"].enumerated() {
            let removed = storage.setEntry(entry(value), forKey: key, cost: 0)
            #expect(removed.all.isEmpty)
        }
        #expect(storage.keysByRecency == ["c", "b", "a"])
        guard case .hit(let hit) = storage.entry(forKey: "a", now: nil) else {
            Issue.record("a missed")
            return
        }
        #expect(hit == entry(0))
        #expect(storage.keysByRecency == ["a", "c", "b"])
        _ = storage.entry(forKey: "c", now: nil)
        #expect(storage.keysByRecency == ["c", "a", "b"])
        // A hit on the newest entry changes nothing.
        _ = storage.entry(forKey: "c", now: nil)
        #expect(storage.keysByRecency == ["c", "a", "b"])
        guard case .miss = storage.entry(forKey: "z", now: nil) else {
            Issue.record("an unknown key hit")
            return
        }
        #expect(storage.invariantViolations().isEmpty)
    }

    @Test func peekTouchesNothing() {
        var storage = storage()
        _ = storage.setEntry(entry(1), forKey: "a", cost: 3)
        _ = storage.setEntry(entry(2), forKey: "b", cost: 0)
        #expect(storage.peek("a")?.entry == entry(1))
        #expect(storage.peek("a")?.cost == 3)
        #expect(storage.keysByRecency == ["b", "a"])
    }

    @Test func theCountLimitEvictsTheOldestAndHandsItBack() {
        var storage = storage(countLimit: 2)
        _ = storage.setEntry(entry(1), forKey: "a", cost: 0)
        _ = storage.setEntry(entry(2), forKey: "b", cost: 0)
        let removed = storage.setEntry(entry(3), forKey: "c", cost: 0)
        #expect(removed.all.map(\.key) == ["a"])
        #expect(removed.all.map(\.entry.value) == [1])
        #expect(storage.keysByRecency == ["c", "b"])
        #expect(storage.invariantViolations().isEmpty)
    }

    @Test func theCostLimitEvictsOldestFirstUntilTheNewEntryFits() {
        var storage = storage(costLimit: 10)
        _ = storage.setEntry(entry(1), forKey: "a", cost: 4)
        _ = storage.setEntry(entry(2), forKey: "b", cost: 4)
        _ = storage.setEntry(entry(3), forKey: "c", cost: 2)
        let removed = storage.setEntry(entry(4), forKey: "d", cost: 7)
        #expect(removed.all.map(\.key) == ["a", "b"])
        #expect(storage.keysByRecency == ["d", "c"])
        #expect(storage.totalCost == 9)
        #expect(storage.invariantViolations().isEmpty)
    }

    @Test func aReplacementHandsBackThePreviousEntry() {
        var storage = storage(costLimit: 10)
        _ = storage.setEntry(entry(1), forKey: "a", cost: 6)
        _ = storage.setEntry(entry(2), forKey: "b", cost: 1)
        let removed = storage.setEntry(entry(3), forKey: "a", cost: 8)
        #expect(removed.all.map(\.key) == ["a"])
        #expect(removed.all.map(\.entry.value) == [1])
        #expect(storage.keysByRecency == ["a", "b"])
        #expect(storage.totalCost == 9)
        #expect(storage.peek("a")?.entry.value == 3)
    }

    @Test func anOversizeEntryIsNotStoredAndOnlyItsKeysPreviousEntryIsRemoved() {
        var storage = storage(costLimit: 10)
        _ = storage.setEntry(entry(1), forKey: "a", cost: 5)
        _ = storage.setEntry(entry(2), forKey: "b", cost: 5)
        let removed = storage.setEntry(entry(3), forKey: "a", cost: 11)
        #expect(removed.all.map(\.entry.value) == [1])
        #expect(storage.keysByRecency == ["b"])
        #expect(storage.totalCost == 5)
        // An entry costing exactly the limit fits, evicting the rest.
        let fits = storage.setEntry(entry(4), forKey: "c", cost: 10)
        #expect(fits.all.map(\.key) == ["b"])
        #expect(storage.keysByRecency == ["c"])
        #expect(storage.invariantViolations().isEmpty)
    }

    @Test func aCountLimitOfZeroStoresNothing() {
        var storage = storage(countLimit: 0)
        let removed = storage.setEntry(entry(1), forKey: "a", cost: 0)
        #expect(removed.all.isEmpty)
        #expect(storage.count == 0)
        #expect(storage.invariantViolations().isEmpty)
    }

    @Test func aNegativeCostCountsAsZero() {
        var storage = storage(costLimit: 1)
        _ = storage.setEntry(entry(1), forKey: "a", cost: -5)
        _ = storage.setEntry(entry(2), forKey: "b", cost: 1)
        #expect(storage.totalCost == 1)
        #expect(storage.keysByRecency == ["b", "a"])
    }

    @Test func withoutACostLimitTheTotalStaysWithinIntMax() {
        var storage = storage()
        _ = storage.setEntry(entry(1), forKey: "a", cost: .max)
        let removed = storage.setEntry(entry(2), forKey: "b", cost: .max)
        #expect(removed.all.map(\.key) == ["a"])
        #expect(storage.totalCost == .max)
        _ = storage.setEntry(entry(3), forKey: "b", cost: 1)
        _ = storage.setEntry(entry(4), forKey: "c", cost: .max - 1)
        #expect(storage.totalCost == .max)
        #expect(storage.keysByRecency == ["c", "b"])
    }

    @Test func removalHandsBackTheEntryAndFreesItsSlotForReuse() {
        var storage = storage()
        for value in 0..<4 { _ = storage.setEntry(entry(value), forKey: "\(value)", cost: 1) }
        #expect(storage.order.slotCount == 4)
        let first = storage.removeEntry(forKey: "1")
        let again = storage.removeEntry(forKey: "1")
        let third = storage.removeEntry(forKey: "3")
        #expect(first?.entry.value == 1)
        #expect(again == nil)
        #expect(third?.entry.value == 3)
        #expect(storage.totalCost == 2)
        #expect(storage.keysByRecency == ["2", "0"])
        _ = storage.setEntry(entry(5), forKey: "5", cost: 1)
        _ = storage.setEntry(entry(6), forKey: "6", cost: 1)
        #expect(storage.order.slotCount == 4)
        #expect(storage.keysByRecency == ["6", "5", "2", "0"])
        #expect(storage.invariantViolations().isEmpty)
        // Evictions free slots the same way: a full storage never grows its array.
        var bounded = self.storage(countLimit: 3)
        for value in 0..<1_000 { _ = bounded.setEntry(entry(value), forKey: "\(value % 7)", cost: 0) }
        #expect(bounded.order.slotCount == 3)
        #expect(bounded.invariantViolations().isEmpty)
    }

    @Test func anEntryPastItsLifetimeIsRemovedOnReadAndHandedBack() {
        var storage = storage(policy: FreshnessPolicy(freshFor: .zero, maxAge: .seconds(5)))
        _ = storage.setEntry(entry(1), forKey: "a", cost: 2)
        guard case .hit = storage.entry(forKey: "a", now: now.advanced(by: .seconds(4))) else {
            Issue.record("a young entry missed")
            return
        }
        guard case .expired(let stored) = storage.entry(forKey: "a", now: now.advanced(by: .seconds(5))) else {
            Issue.record("an expired entry was not removed")
            return
        }
        #expect(stored.key == "a")
        #expect(stored.entry == entry(1))
        #expect(storage.count == 0)
        #expect(storage.totalCost == 0)
        // Without a time, nothing expires.
        _ = storage.setEntry(entry(2), forKey: "b", cost: 0)
        guard case .hit = storage.entry(forKey: "b", now: nil) else {
            Issue.record("a read without a time missed")
            return
        }
    }

    @Test func invalidationMarksInPlace() {
        var storage = storage()
        _ = storage.setEntry(entry(1), forKey: "a", cost: 3)
        _ = storage.setEntry(entry(2), forKey: "b", cost: 0)
        let found = storage.invalidateEntry(forKey: "a")
        let missing = storage.invalidateEntry(forKey: "z")
        #expect(found)
        #expect(!missing)
        #expect(storage.peek("a")?.entry == entry(1).invalidated)
        #expect(storage.peek("a")?.cost == 3)
        #expect(storage.keysByRecency == ["b", "a"])
    }

    @Test func aSnapshotOnlyInvalidatesTheEntriesItSaw() {
        var storage = storage()
        for key in ["a", "b", "c", "d"] { _ = storage.setEntry(entry(0), forKey: key, cost: 0) }
        let snapshot = storage.snapshot()
        #expect(Set(snapshot.map(\.key)) == ["a", "b", "c", "d"])
        // After the snapshot: "a" is rewritten with an equal entry, "b" removed, "c" removed and stored
        // again, "e" stored for the first time.
        _ = storage.setEntry(entry(0), forKey: "a", cost: 0)
        _ = storage.removeEntry(forKey: "b")
        _ = storage.removeEntry(forKey: "c")
        _ = storage.setEntry(entry(0), forKey: "c", cost: 0)
        _ = storage.setEntry(entry(0), forKey: "e", cost: 0)
        let marked = storage.invalidate(snapshot)
        #expect(marked == 1)
        #expect(storage.peek("a")?.entry.isInvalidated == false)
        #expect(storage.peek("b") == nil)
        #expect(storage.peek("c")?.entry.isInvalidated == false)
        #expect(storage.peek("d")?.entry.isInvalidated == true)
        #expect(storage.peek("e")?.entry.isInvalidated == false)
    }

    @Test func aReplacementKeepsTheKeyInstanceTheIndexHolds() {
        var storage = LRUStorage<CacheProbeKey, Int>(countLimit: nil, costLimit: nil, policy: .forever)
        let first = CacheDeinitProbe(1)
        _ = storage.setEntry(entry(1), forKey: CacheProbeKey(id: 1, probe: first), cost: 0)
        _ = storage.setEntry(entry(2), forKey: CacheProbeKey(id: 1, probe: CacheDeinitProbe(2)), cost: 0)
        #expect(storage.peek(CacheProbeKey(id: 1, probe: CacheDeinitProbe(3)))?.key.probe === first)
        #expect(storage.index.keys.first?.probe === first)
    }
}
