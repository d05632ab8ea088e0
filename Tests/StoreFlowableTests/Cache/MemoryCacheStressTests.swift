import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Many tasks doing random operations on one `MemoryCache` at once, time moving under them: the
/// storage stays consistent, the limits hold at every observation, a read never returns another key's
/// value or an expired one, and every value is released exactly once. Run under ThreadSanitizer
/// (`swift test --sanitize=thread`), any access to the storage outside the lock is reported.
struct MemoryCacheStressTests {
    /// A value that knows its key and its timestamp, and counts its releases.
    final class Payload: Sendable {
        let key: Int
        let storedAt: CacheTime
        let counters: Counters

        init(key: Int, storedAt: CacheTime, counters: Counters) {
            self.key = key
            self.storedAt = storedAt
            self.counters = counters
            counters.created.withLock { $0 += 1 }
        }

        deinit { counters.released.withLock { $0 += 1 } }
    }

    /// How many payloads were made and released.
    final class Counters: Sendable {
        let created = LockedValue(0)
        let released = LockedValue(0)
    }

    static let countLimit = 40
    static let costLimit = 150
    static let lifetime = Duration.seconds(30)

    @Test(.timeLimit(.minutes(1)), arguments: [1, 2] as [UInt64])
    func randomOperationsFromManyTasksKeepTheCacheConsistent(seed: UInt64) async {
        let clock = ManualCacheClock()
        let counters = Counters()
        let cache = MemoryCache<Int, Payload>(
            countLimit: Self.countLimit, costLimit: Self.costLimit,
            policy: FreshnessPolicy(freshFor: .seconds(10), maxAge: Self.lifetime), clock: clock)
        let problems = LockedLog<String>()

        /// Checks a value read for `key` at a time no earlier than `readAfter`.
        @Sendable func check(_ payload: Payload?, key: Int, readAfter: CacheTime) {
            guard let payload else { return }
            if payload.key != key { problems.append("key \(key) returned the value of \(payload.key)") }
            // The clock only moves forward here, so a value read after `readAfter` was younger than its
            // lifetime at some moment at or after `readAfter`.
            if payload.storedAt.duration(to: readAfter) >= Self.lifetime {
                problems.append("key \(key) returned a value stored at \(payload.storedAt), read after \(readAfter)")
            }
        }

        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var random = CacheTestRandom(seed: seed &* 100 &+ UInt64(task))
                    for _ in 0..<4_000 {
                        let key = random.below(64)
                        switch random.below(100) {
                        case 0..<35:
                            let before = clock.now
                            check(cache[key], key: key, readAfter: before)
                        case 35..<45:
                            let before = clock.now
                            check(cache.entry(forKey: key)?.value, key: key, readAfter: before)
                        case 45..<70:
                            let now = clock.now
                            let payload = Payload(key: key, storedAt: now, counters: counters)
                            let entry = CacheEntry(value: payload, storedAt: now)
                            cache.setEntry(entry, forKey: key, cost: random.below(12))
                        case 70..<75:
                            // Copied entries carry an older timestamp; cost may exceed the limit.
                            let storedAt = clock.now.advanced(by: .seconds(-random.below(40)))
                            let payload = Payload(key: key, storedAt: storedAt, counters: counters)
                            let entry = CacheEntry(value: payload, storedAt: storedAt)
                            cache.setEntry(entry, forKey: key, cost: random.below(200))
                        case 75..<83:
                            if let payload = cache.removeValue(forKey: key), payload.key != key {
                                problems.append("removing \(key) returned the value of \(payload.key)")
                            }
                        case 83..<88:
                            cache.invalidateEntry(forKey: key)
                        case 88..<90:
                            let modulus = 2 + random.below(5)
                            cache.invalidateEntries { candidate in candidate % modulus == 0 }
                        case 90..<91:
                            cache.removeAllEntries()
                        case 91..<95:
                            clock.advance(by: .seconds(random.below(4)))
                        default:
                            let (count, totalCost) = (cache.count, cache.totalCost)
                            if count > Self.countLimit { problems.append("\(count) entries") }
                            if totalCost > Self.costLimit { problems.append("total cost \(totalCost)") }
                            let violations = cache.invariantViolations
                            if !violations.isEmpty { problems.append("\(violations)") }
                        }
                    }
                }
            }
        }

        #expect(problems.all.isEmpty, "\(problems.all.prefix(10))")
        #expect(cache.invariantViolations.isEmpty)
        #expect(cache.count <= Self.countLimit)
        #expect(cache.totalCost <= Self.costLimit)
        let stored = cache.count
        let created = counters.created.withLock { $0 }
        #expect(counters.released.withLock { $0 } == created - stored)
        cache.removeAllEntries()
        #expect(counters.released.withLock { $0 } == created)
    }

    /// Operations that synchronise through the cache's lock only (no clock, no other lock), so that
    /// ThreadSanitizer sees as few unrelated happens-before edges as possible between the tasks.
    @Test(.timeLimit(.minutes(1)))
    func contendedOperationsWithNoOtherSynchronisation() async {
        let cache = MemoryCache<Int, Int>(countLimit: 16, costLimit: 40, clock: ManualCacheClock())
        let stamp = manualClockStart
        let sawLimitsBroken = await withTaskGroup(of: Bool.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var random = CacheTestRandom(seed: UInt64(task))
                    var broken = false
                    for round in 0..<20_000 {
                        let key = random.below(32)
                        switch random.below(10) {
                        case 0..<3: _ = cache[key]
                        case 3..<6:
                            let entry = CacheEntry(value: round, storedAt: stamp)
                            cache.setEntry(entry, forKey: key, cost: random.below(8))
                        case 6: cache.removeEntry(forKey: key)
                        case 7: cache.invalidateEntry(forKey: key)
                        default: broken = broken || cache.count > 16 || cache.totalCost > 40
                        }
                    }
                    return broken
                }
            }
            return await group.contains(true)
        }
        #expect(!sawLimitsBroken)
        #expect(cache.invariantViolations.isEmpty)
    }
}
