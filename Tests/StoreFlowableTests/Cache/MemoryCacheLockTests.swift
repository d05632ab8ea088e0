import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// No user code runs under `MemoryCache`'s lock: a value or key released by any operation, the clock
/// and the invalidation predicate may all call the cache again. Were any of them run under the lock,
/// the call would deadlock on the non-recursive mutex and the test would hang, not pass.
struct MemoryCacheLockTests {
    let clock = ManualCacheClock()

    /// What a released value saw: its id and the cache's count at that moment.
    struct Release: Sendable, Equatable {
        let id: Int
        let countSeen: Int
    }

    /// A cache whose values, when released, read and write it and log what they saw.
    final class ReentrantCache: Sendable {
        let cache: MemoryCache<Int, CacheDeinitProbe>
        let releases = LockedLog<Release>()

        init(countLimit: Int? = nil, costLimit: Int? = nil, clock: ManualCacheClock) {
            cache = MemoryCache(
                countLimit: countLimit, costLimit: costLimit,
                policy: FreshnessPolicy(freshFor: .zero, maxAge: .seconds(10)), clock: clock)
        }

        /// A value that calls the cache from its `deinit`.
        func value(_ id: Int) -> CacheDeinitProbe {
            CacheDeinitProbe(id) { [cache, releases] id in
                _ = cache.value(forKey: -1)
                cache.removeEntry(forKey: -2)
                releases.append(Release(id: id, countSeen: cache.count))
            }
        }

        /// Drops every remaining value (they hold the cache, so they would otherwise leak).
        func tearDown() { cache.removeAllEntries() }
    }

    @Test func releasedValuesMayCallTheCacheFromTheirDeinit() {
        let subject = ReentrantCache(countLimit: 3, costLimit: 10, clock: clock)
        let cache = subject.cache
        defer { subject.tearDown() }
        func released() -> [Release] { subject.releases.all }

        cache[1] = subject.value(1)
        cache[1] = subject.value(10)  // replaced
        #expect(released() == [Release(id: 1, countSeen: 1)])
        for id in 2...4 { cache.setValue(subject.value(id), forKey: id, cost: 1) }  // the count limit evicts 10
        #expect(released().last == Release(id: 10, countSeen: 3))
        cache.setValue(subject.value(5), forKey: 5, cost: 10)  // the cost limit evicts 2, 3 and 4
        #expect(released().suffix(3).map(\.id).sorted() == [2, 3, 4])
        #expect(released().suffix(3).map(\.countSeen) == [1, 1, 1])
        cache.setValue(subject.value(50), forKey: 5, cost: 11)  // oversize: 5 is removed, 50 never stored
        #expect(released().suffix(2).map(\.id).sorted() == [5, 50])
        #expect(released().suffix(2).map(\.countSeen) == [0, 0])
        cache[6] = subject.value(6)
        cache[6] = nil
        #expect(released().last == Release(id: 6, countSeen: 0))
        cache[7] = subject.value(7)
        cache.removeEntry(forKey: 7)
        #expect(released().last == Release(id: 7, countSeen: 0))
        cache[8] = subject.value(8)
        _ = cache.removeValue(forKey: 8)
        #expect(released().last == Release(id: 8, countSeen: 0))
        cache[9] = subject.value(9)
        clock.advance(by: .seconds(10))
        #expect(cache[9] == nil)  // expired on read
        #expect(released().last == Release(id: 9, countSeen: 0))
        cache[11] = subject.value(11)
        cache[12] = subject.value(12)
        cache.removeAllEntries()
        #expect(released().suffix(2).map(\.id).sorted() == [11, 12])
        #expect(released().suffix(2).map(\.countSeen) == [0, 0])
        #expect(cache.invariantViolations.isEmpty)
    }

    @Test func evictionRunsNoUserCodeUnderTheLock() {
        let callingBackClock = CallingBackClock()
        let cache = MemoryCache<CacheProbeKey, CacheDeinitProbe>(
            countLimit: 2, policy: FreshnessPolicy(freshFor: .seconds(1)), clock: callingBackClock)
        let released = LockedLog<String>()
        let clockReads = LockedLog<Int>()
        // Every piece of user code the eviction path meets calls the cache: the clock, the evicted key's
        // `deinit` and the evicted value's `deinit`.
        callingBackClock.setOnRead { clockReads.append(cache.count) }
        func key(_ id: Int) -> CacheProbeKey {
            let probe = CacheDeinitProbe(id) { id in released.append("key \(id), \(cache.count) left") }
            return CacheProbeKey(id: id, probe: probe)
        }
        func value(_ id: Int) -> CacheDeinitProbe {
            CacheDeinitProbe(id) { id in released.append("value \(id), \(cache.count) left") }
        }
        cache[key(0)] = value(0)
        cache[key(1)] = value(1)
        #expect(released.all.isEmpty)
        cache[key(2)] = value(2)
        #expect(Set(released.all) == ["key 0, 2 left", "value 0, 2 left"])
        #expect(cache.keysByRecency.map(\.id) == [2, 1])
        #expect(clockReads.all == [0, 1, 2])
        // The predicate is user code too.
        cache.invalidateEntries { key in cache.peekEntry(key) != nil && key.id == 1 }
        #expect(cache.peekEntry(key(1))?.isInvalidated == true)
        cache.removeAllEntries()
    }

    @Test func aReplacedKeysOwnInstanceIsReleasedByTheCaller() {
        let cache = MemoryCache<CacheProbeKey, Int>(clock: clock)
        let released = LockedLog<Int>()
        func key(_ id: Int, probe: Int) -> CacheProbeKey {
            CacheProbeKey(id: id, probe: CacheDeinitProbe(probe) { probe in released.append(probe) })
        }
        cache[key(1, probe: 100)] = 1
        cache[key(1, probe: 101)] = 2  // the cache keeps its first instance; the caller drops this one
        #expect(released.all == [101])
        cache[key(1, probe: 102)] = nil
        #expect(released.all == [101, 100, 102])
    }
}
