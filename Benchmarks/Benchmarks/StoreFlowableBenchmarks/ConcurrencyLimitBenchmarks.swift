import Benchmark
import StoreFlowable

// MARK: ConcurrencyLimit, uncontended

/// `ConcurrencyLimit.run` when a permit is free, 1,000 calls per iteration (results are per call), with
/// and without a bound on the queue, paired with what it is built on: a pthread mutex taken twice per
/// call (once to take the permit, once to give it back) around an integer count. An uncontended call
/// suspends nowhere, so this is the cost every origin call of a store with a limit pays; the bounded
/// pair shows that the bound (`maxQueued`) costs nothing when nobody waits.
func concurrencyLimitBenchmarks() {
    let config = configuration(scaling: .kilo, mallocTolerance: 0)

    let running = Locked(0)
    Benchmark("ConcurrencyLimit.baseline.lockedCounter", configuration: config) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(
                running.withLock { count -> Bool in
                    guard count < 8 else { return false }
                    count += 1
                    return true
                })
            running.withLock { $0 -= 1 }
        }
    }

    let unbounded = ConcurrencyLimit(maxConcurrent: 8)
    Benchmark("ConcurrencyLimit.run", configuration: config) { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(try await unbounded.run { index })
        }
        benchmark.stopMeasurement()
        if unbounded.runningCount != 0 { benchmark.error("a permit was not given back") }
    }

    let bounded = ConcurrencyLimit(maxConcurrent: 8, maxQueued: 16)
    Benchmark("ConcurrencyLimit.run.boundedQueue", configuration: config) { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(try await bounded.run { index })
        }
        benchmark.stopMeasurement()
        if bounded.runningCount != 0 { benchmark.error("a permit was not given back") }
    }
}
