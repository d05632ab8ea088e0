import Benchmark
import StoreFlowable

// MARK: MemoryCache reads and writes

/// `MemoryCache` reads (hits) and writes (replacing an existing key) over 1,000 keys, 1,000 calls per
/// iteration (results are per call), each paired with the same calls on a `[Int: User]` dictionary behind
/// a pthread mutex (`Locked`), the cheapest thread-safe dictionary a user could write: what the cache
/// adds is its recency list, entry timestamps and limits. The cache has no limits that a write could
/// break, so no call evicts, and its policy never expires entries, so a read does not ask the clock; a
/// write does (`SystemCacheClock`, one `clock_gettime`). The loops are written out in each benchmark so
/// that no closure call is measured with them.
func memoryCacheBenchmarks() {
    let config = configuration(scaling: .kilo, mallocTolerance: 0)
    let keys = 1_000
    let users = (0..<keys).map { User(id: $0) }

    let cache = MemoryCache<Int, User>()
    let dictionary = Locked([Int: User]())
    for user in users {
        cache[user.id] = user
        dictionary.withLock { $0[user.id] = user }
    }

    Benchmark("MemoryCache.baseline.lockedDictionaryGet", configuration: config) { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(dictionary.withLock { $0[index % keys] })
        }
    }

    Benchmark("MemoryCache.get", configuration: config) { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(cache[index % keys])
        }
        benchmark.stopMeasurement()
        if cache.count != keys { benchmark.error("expected \(keys) entries, found \(cache.count)") }
    }

    Benchmark("MemoryCache.baseline.lockedDictionarySet", configuration: config) { benchmark in
        for index in benchmark.scaledIterations {
            let user = users[index % keys]
            dictionary.withLock { $0[user.id] = user }
        }
    }

    Benchmark("MemoryCache.set", configuration: config) { benchmark in
        for index in benchmark.scaledIterations {
            let user = users[index % keys]
            cache[user.id] = user
        }
        benchmark.stopMeasurement()
        if cache.count != keys { benchmark.error("expected \(keys) entries, found \(cache.count)") }
    }
}
