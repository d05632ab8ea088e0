import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Thousands of random operations on a `MemoryCache`, each checked against `ReferenceCache`, an
/// obviously correct model: an array ordered by recency, searched and shifted in O(n). After every
/// operation the cache must return what the model returns and hold the same entries in the same order.
struct MemoryCacheModelTests {
    /// The model: entries in an array, most recently used first.
    struct ReferenceCache {
        struct Item {
            var key: Int
            var entry: CacheEntry<Int>
            var cost: Int
        }

        let countLimit: Int?
        let costLimit: Int?
        let policy: FreshnessPolicy
        var items: [Item] = []

        var totalCost: Int { items.reduce(0) { $0 + $1.cost } }

        mutating func entry(forKey key: Int, now: CacheTime) -> CacheEntry<Int>? {
            guard let position = items.firstIndex(where: { $0.key == key }) else { return nil }
            let item = items.remove(at: position)
            if policy.isPastLifetime(storedAt: item.entry.storedAt, now: now) { return nil }
            items.insert(item, at: 0)
            return item.entry
        }

        mutating func setEntry(_ entry: CacheEntry<Int>, forKey key: Int, cost: Int) {
            items.removeAll { $0.key == key }
            let cost = max(cost, 0)
            if cost > costLimit ?? .max || countLimit == 0 { return }
            while items.count >= countLimit ?? .max || totalCost + cost > costLimit ?? .max {
                items.removeLast()
            }
            items.insert(Item(key: key, entry: entry, cost: cost), at: 0)
        }

        mutating func removeValue(forKey key: Int) -> Int? {
            guard let position = items.firstIndex(where: { $0.key == key }) else { return nil }
            return items.remove(at: position).entry.value
        }

        mutating func invalidate(where isIncluded: (Int) -> Bool) {
            for position in items.indices where isIncluded(items[position].key) {
                items[position].entry.isInvalidated = true
            }
        }
    }

    /// The limits and policies the random runs cover.
    static let configurations: [(countLimit: Int?, costLimit: Int?, policy: FreshnessPolicy)] = [
        (8, nil, FreshnessPolicy(freshFor: .seconds(10), staleIfError: .seconds(20))),
        (nil, 20, FreshnessPolicy(freshFor: .seconds(30))),
        (5, 12, FreshnessPolicy(freshFor: .zero, maxAge: .seconds(30))),
        (nil, nil, .forever),
        (1, 0, FreshnessPolicy(freshFor: .seconds(30))),
        (3, nil, .alwaysFetch),
    ]

    @Test(arguments: MemoryCacheModelTests.configurations.indices, [1, 2, 3] as [UInt64])
    func randomOperationsMatchTheReference(configuration: Int, seed: UInt64) {
        let (countLimit, costLimit, policy) = Self.configurations[configuration]
        let clock = ManualCacheClock()
        let cache = MemoryCache<Int, Int>(countLimit: countLimit, costLimit: costLimit, policy: policy, clock: clock)
        var model = ReferenceCache(countLimit: countLimit, costLimit: costLimit, policy: policy)
        var random = CacheTestRandom(seed: seed &* 1_000 &+ UInt64(configuration))
        var value = 0
        for step in 0..<5_000 {
            let key = random.below(16)
            let cost = random.chance(10) ? -random.below(4) : random.below(8)
            value += 1
            let roll = random.below(100)
            switch roll {
            case 0..<10:
                let expected = model.entry(forKey: key, now: clock.now)
                #expect(cache[key] == expected?.value, "step \(step)")
            case 10..<18:
                let expected = model.entry(forKey: key, now: clock.now)
                #expect(cache.value(forKey: key) == expected?.value, "step \(step)")
            case 18..<26:
                let expected = model.entry(forKey: key, now: clock.now)
                #expect(cache.entry(forKey: key) == expected, "step \(step)")
            case 26..<42:
                cache.setValue(value, forKey: key, cost: cost)
                model.setEntry(CacheEntry(value: value, storedAt: clock.now), forKey: key, cost: cost)
            case 42..<50:
                cache[key] = value
                model.setEntry(CacheEntry(value: value, storedAt: clock.now), forKey: key, cost: 0)
            case 50..<58:
                // An entry copied from elsewhere: any age, possibly from the future, possibly marked.
                let storedAt = clock.now.advanced(by: .seconds(random.below(40) - 35))
                let entry = CacheEntry(value: value, storedAt: storedAt, isInvalidated: random.chance(30))
                if random.chance(50) {
                    cache.setEntry(entry, forKey: key)
                    model.setEntry(entry, forKey: key, cost: 0)
                } else {
                    cache.setEntry(entry, forKey: key, cost: cost)
                    model.setEntry(entry, forKey: key, cost: cost)
                }
            case 58..<62:
                let expected = model.removeValue(forKey: key)
                #expect(cache.removeValue(forKey: key) == expected, "step \(step)")
            case 62..<65:
                cache.removeEntry(forKey: key)
                _ = model.removeValue(forKey: key)
            case 65..<67:
                cache[key] = nil
                _ = model.removeValue(forKey: key)
            case 67..<72:
                cache.invalidateEntry(forKey: key)
                model.invalidate { $0 == key }
            case 72..<74:
                let modulus = 2 + random.below(3)
                let remainder = random.below(modulus)
                cache.invalidateEntries { $0 % modulus == remainder }
                model.invalidate { $0 % modulus == remainder }
            case 74:
                cache.removeAllEntries()
                model.items = []
            case 75..<90:
                clock.advance(by: .seconds(random.below(8)))
            case 90..<93:
                clock.advance(by: .seconds(-random.below(20)))
            default:
                #expect(cache.count == model.items.count, "step \(step)")
                #expect(cache.totalCost == model.totalCost, "step \(step)")
            }
            let storage = cache.storageSnapshot
            let violations = storage.invariantViolations()
            #expect(violations.isEmpty, "step \(step): \(violations)")
            #expect(storage.keysByRecency == model.items.map(\.key), "step \(step)")
            #expect(storage.totalCost == model.totalCost, "step \(step)")
            for item in model.items {
                #expect(storage.peek(item.key)?.entry == item.entry, "step \(step), key \(item.key)")
                #expect(storage.peek(item.key)?.cost == item.cost, "step \(step), key \(item.key)")
            }
            if !violations.isEmpty || storage.keysByRecency != model.items.map(\.key) { break }
        }
    }
}
