import Testing

@testable import StoreFlowable

/// `LRUList`, the recency order inside `MemoryCache`'s storage, tested directly: order, reuse of freed
/// slots, and a random run against an array.
struct MemoryCacheLRUListTests {
    @Test func insertsAreNewestAndMovesReorder() {
        var list = LRUList()
        #expect(list.slotsByRecency.isEmpty)
        let slots = (0..<4).map { _ in list.insertNewest() }
        #expect(slots == [0, 1, 2, 3])
        #expect(list.slotsByRecency == [3, 2, 1, 0])
        #expect(list.oldest == 0)
        list.moveToNewest(0)
        list.moveToNewest(2)
        list.moveToNewest(2)
        #expect(list.slotsByRecency == [2, 0, 3, 1])
        #expect(list.newest == 2)
        #expect(list.oldest == 1)
        #expect(list.count == 4)
        #expect(list.invariantViolations().isEmpty)
    }

    @Test func removedSlotsAreReusedLastFreedFirst() {
        var list = LRUList()
        for _ in 0..<5 { _ = list.insertNewest() }
        list.remove(1)
        list.remove(4)
        list.remove(0)
        #expect(list.slotsByRecency == [3, 2])
        #expect(list.count == 2)
        #expect(list.invariantViolations().isEmpty)
        #expect(list.insertNewest() == 0)
        #expect(list.insertNewest() == 4)
        #expect(list.insertNewest() == 1)
        #expect(list.insertNewest() == 5)
        #expect(list.slotCount == 6)
        #expect(list.slotsByRecency == [5, 1, 4, 0, 3, 2])
        #expect(list.invariantViolations().isEmpty)
        for slot in list.slotsByRecency { list.remove(slot) }
        #expect(list.slotsByRecency.isEmpty)
        #expect(list.newest == LRUList.none)
        #expect(list.oldest == LRUList.none)
        #expect(list.invariantViolations().isEmpty)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomOperationsMatchAnArray(seed: UInt64) {
        var random = CacheTestRandom(seed: seed)
        var list = LRUList()
        var model: [Int32] = []  // most recent first
        for step in 0..<3_000 {
            switch random.below(3) {
            case 0:
                model.insert(list.insertNewest(), at: 0)
            case 1 where !model.isEmpty:
                let slot = model.remove(at: random.below(model.count))
                list.remove(slot)
            default:
                guard !model.isEmpty else { continue }
                let slot = model.remove(at: random.below(model.count))
                model.insert(slot, at: 0)
                list.moveToNewest(slot)
            }
            #expect(list.slotsByRecency == model, "step \(step)")
            #expect(list.invariantViolations().isEmpty, "step \(step)")
            #expect(list.slotCount <= 3_000)
        }
    }
}
