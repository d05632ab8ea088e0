import Benchmark
import StoreFlowable

/// A cache hit through a ``KeyedStore`` over a ``MemoryCache`` (`users[42].requireData()`, the store
/// built at each call as users write it), next to the cache's own read and to the hand-written actor
/// cache of the `CacheHit` group; 1,000 calls per iteration (results are per call).
func keyedStoreBenchmarks() {
    let config = configuration(scaling: .kilo, mallocTolerance: 0)
    let cache = MemoryCache<Int, User>(policy: FreshnessPolicy(freshFor: .seconds(3_600)))
    cache[42] = User(id: 42)
    let origin = CountingOrigin()
    let users = KeyedStore(cache: cache) { id in try await origin.fetchUser(id: id) }

    // What the store's hit must at least do: read the entry and decide its freshness.
    Benchmark("CacheHit.baseline.directRead.memoryCache", configuration: config) { benchmark in
        blackHole(cache.entry(forKey: 42))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            if let entry = cache.entry(forKey: 42) {
                blackHole(cache.freshness(of: entry) == .fresh ? entry.value : nil)
            }
        }
    }

    Benchmark("CacheHit.requireData.memoryCache", configuration: config) { benchmark in
        blackHole(try await users[42].requireData())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await users[42].requireData())
        }
        benchmark.stopMeasurement()
        if origin.callCount != 0 { benchmark.error("a cache hit fetched from the origin") }
    }
}
