import StoreFlowableTesting
import Testing

@testable import StoreFlowable

@Suite("Issue13Review: a concurrency limit under retries", .timeLimit(.minutes(3)))
struct Issue13ReviewLimitTests {
    /// 50 rounds (15 under ThreadSanitizer, where 50 beside the other suites took 56 s) of 300 callers
    /// over 30 keys behind a limit of 3, with origins that fail and are retried, callers cancelled at
    /// random moments, and the clock moving whenever anyone sleeps: never more than 3 origin calls at
    /// once, never two calls of one key at once, and once every key is idle no permit, queued caller
    /// or sleeper is left.
    @Test func retriesAndCancellationsNeverLoseOrLeakAPermit() async throws {
        var generator = SplitMix64(seed: 0x1313)
        let limit = ConcurrencyLimit(maxConcurrent: 3)
        for round in 0..<(isRunningUnderThreadSanitizer ? 15 : 50) {
            let clock = ManualClock()
            let counts = LockedValue((running: 0, max: 0, perKey: [Int: Int](), maxPerKey: 0))
            let manager = FlowableDataStateManager<Int>(
                fetchPolicy: FetchPolicy(
                    retry: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10), maxDelay: .seconds(1)),
                    concurrencyLimit: limit, clock: clock))
            let store = KeyedStore(cache: MemoryCache<Int, String>(), manager: manager) { key in
                let call = counts.withLock { counts -> Int in
                    counts.running += 1
                    counts.max = max(counts.max, counts.running)
                    counts.perKey[key, default: 0] += 1
                    counts.maxPerKey = max(counts.maxPerKey, counts.perKey[key] ?? 0)
                    return counts.running
                }
                defer {
                    counts.withLock {
                        $0.running -= 1; $0.perKey[key, default: 0] -= 1
                    }
                }
                await Task.yield()
                if (key + call) % 3 != 0 { throw AdvisedError.transient }
                return "value \(key)"
            }
            let finished = LockedValue(0)
            let callers = (0..<300).map { index in
                Task {
                    defer { finished.withLock { $0 += 1 } }
                    return try await store[index % 30].requireData()
                }
            }
            var cancelAt = (0..<300).filter { _ in generator.next() % 3 == 0 }.map { ($0, Int(generator.next() % 40)) }
            var step = 0
            while finished.withLock({ $0 }) < 300 {
                if clock.sleeperCount > 0 { clock.advance(by: .milliseconds(50)) }
                cancelAt.removeAll { index, moment in
                    guard moment <= step else { return false }
                    callers[index].cancel()
                    return true
                }
                step += 1
                await Task.yield()
            }
            for key in 0..<30 {
                while await !manager.isIdle(key, String.self) {
                    if clock.sleeperCount > 0 { clock.advance(by: .milliseconds(50)) }
                    await Task.yield()
                }
            }
            #expect(limit.runningCount == 0 && limit.queuedCount == 0, "round \(round)")
            #expect(clock.sleeperCount == 0, "round \(round)")
            let (running, maxRunning, _, maxPerKey) = counts.withLock { $0 }
            #expect(running == 0 && maxRunning <= 3 && maxPerKey <= 1, "round \(round)")
        }
    }
}
