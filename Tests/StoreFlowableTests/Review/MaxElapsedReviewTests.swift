import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Review of `RetryPolicy.maxElapsed`: its arithmetic on extreme values, when the bound is reckoned
/// from, how often it reads the clock, and how it meets the concurrency limit.
@Suite("Review: RetryPolicy.maxElapsed", .timeLimit(.minutes(1)))
struct MaxElapsedReviewTests {
    /// A duration far beyond `Int64.max` seconds (a `Duration` holds 128 bits of attoseconds).
    private static let huge = Duration.seconds(Int64.max) * 10

    // MARK: Extreme values

    /// "Values out of range are clamped, never trapped on": the elapsed time plus the delay used to be
    /// added, which traps once their sum leaves `Duration`'s range.
    @Test func hugeElapsedTimesAndDelaysNeverTrap() {
        var policy = RetryPolicy(
            maxAttempts: 3, baseDelay: Self.huge, maxDelay: Self.huge, jitter: .none, maxElapsed: Self.huge)
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retryAfter(Self.huge), elapsed: Self.huge) == nil)
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retry, elapsed: Self.huge) == nil)
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retry, elapsed: .zero) == Self.huge)
        #expect(
            policy.delay(afterFailedAttempt: 1, advice: .retryAfter(.seconds(1)), elapsed: Self.huge - .seconds(1))
                == .seconds(1))
        #expect(
            policy.delay(
                afterFailedAttempt: 1, advice: .retryAfter(.seconds(1)),
                elapsed: Self.huge - .seconds(1) + .nanoseconds(1)) == nil)
        policy.maxElapsed = .seconds(1)
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retryAfter(Self.huge), elapsed: Self.huge) == nil)
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retryAfter(.zero), elapsed: Self.huge) == nil)
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retryAfter(Self.huge), elapsed: .zero) == nil)
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retryAfter(.seconds(1)), elapsed: .zero) == .seconds(1))
        // A negative elapsed time (a clock set back) counts as zero.
        #expect(
            policy.delay(afterFailedAttempt: 1, advice: .retryAfter(.seconds(1)), elapsed: .zero - Self.huge)
                == .seconds(1))
        policy.maxElapsed = .zero - Self.huge
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retryAfter(.zero), elapsed: .zero - Self.huge) == .zero)
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retryAfter(.nanoseconds(1)), elapsed: .zero) == nil)
    }

    /// The same promise for the jitter (older than `maxElapsed`, found on the way): scaling a backoff
    /// beyond `Int64.max` seconds split it into `components`, whose seconds no longer fit an `Int64`.
    @Test(arguments: [RetryPolicy.Jitter.full, .equal])
    func hugeBackoffsWithJitterNeverTrap(jitter: RetryPolicy.Jitter) throws {
        let policy = RetryPolicy(
            maxAttempts: 3, baseDelay: Self.huge, maxDelay: Self.huge, jitter: jitter, random: { 0.5 })
        let delay = try #require(policy.delay(afterFailedAttempt: 1, advice: .retry))
        let expected = jitter == .full ? Self.huge / 2 : Self.huge / 4 * 3
        // To a millionth: at this size the scaling is done in floating point.
        #expect(delay <= Self.huge)
        #expect(max(delay - expected, expected - delay) <= Self.huge / 1_000_000)
    }

    // MARK: Through the store

    /// "No retry starts later than `maxElapsed` after the fetch began." The bound was checked against
    /// the time of the failure, but the backoff was measured from a later reading of the clock, after
    /// the `fetchFailed` and `retryScheduled` reports: an observer that takes time (here 2 s, on the
    /// manual clock) pushed the retry past the bound.
    @Test func aSlowObserverCannotPushARetryPastMaxElapsed() async throws {
        let clock = ManualClock()
        let policy = RetryPolicy(
            maxAttempts: 5, baseDelay: .seconds(2), maxDelay: .seconds(10), jitter: .none, maxElapsed: .seconds(3))
        let calls = LockedValue<[Duration]>([])
        let store = KeyedStore(
            cache: MemoryCache<Int, String>(),
            manager: FlowableDataStateManager(
                fetchPolicy: FetchPolicy(retry: policy, clock: clock),
                observer: SlowObserver(clock: clock, cost: .seconds(2)))
        ) { _ -> String in
            calls.withLock { $0.append(clock.now.offset) }
            throw AdvisedError.transient
        }
        let caller = Task { try await store[1].requireData() }
        // Attempt 1 fails at 0 s: a retry 2 s later fits the 3 s bound. Move the clock on, half a
        // second at a time, whenever the fetch sleeps, until the retry has called the origin.
        while calls.withLock({ $0.count }) < 2, !Task.isCancelled {
            if clock.sleeperCount > 0 { clock.advance(by: .milliseconds(500)) }
            await Task.yield()
        }
        await #expect(throws: AdvisedError.self) { try await caller.value }
        // The retry starts 2 s after the failure, at 2 s: not at 4 s (2 s of reports, then 2 s of sleep).
        #expect(calls.withLock { $0 } == [.zero, .seconds(2)])
    }

    /// "The time is read ... only when `maxElapsed` is set": and only when a retry can follow. A single
    /// attempt has nothing to bound, so it reads no clock, like a store without `maxElapsed`; a fetch
    /// that retries reads it as it begins and once after each failure that may be retried (the backoff
    /// is measured from that reading, not from one more).
    @Test func theClockIsReadOnlyWhenARetryCanBeBounded() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        // (attempts, maxElapsed, limited, reads): a store without a policy (the fast path), a single
        // attempt, and three attempts whose two backoffs each read the clock once, with or without
        // `maxElapsed` (then it reads once more, as the fetch begins).
        let cases: [(Int, Duration?, Bool, Int)] = [
            (1, nil, false, 0), (1, .seconds(60), false, 0), (1, .seconds(60), true, 0), (3, nil, true, 2),
            (3, .seconds(60), true, 3),
        ]
        for (attempts, maxElapsed, limited, expectedReads) in cases {
            let clock = CountingClock()
            let policy = RetryPolicy(
                maxAttempts: attempts, baseDelay: .zero, jitter: .none, maxElapsed: maxElapsed)
            let store = KeyedStore(
                cache: MemoryCache<Int, String>(),
                manager: FlowableDataStateManager(
                    fetchPolicy: FetchPolicy(retry: policy, concurrencyLimit: limited ? limit : nil, clock: clock))
            ) { _ -> String in throw AdvisedError.transient }
            await #expect(throws: AdvisedError.self) { try await store[1].requireData() }
            #expect(
                clock.reads == expectedReads,
                "maxAttempts \(attempts), maxElapsed \(String(describing: maxElapsed)), limited \(limited)")
        }
    }

    /// What `maxElapsed` does not bound (pinned, as `Docs/Resilience.md` says: "it bounds when the last
    /// attempt starts, ... its wait for a permit included"): a retry whose backoff ends within the bound
    /// then waits for the limit's permit as long as it takes, and calls the origin when it gets it, here
    /// 11 s into a fetch bounded by 3 s.
    @Test func aRetryWaitingForAPermitCallsTheOriginPastMaxElapsed() async throws {
        let clock = ManualClock()
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        let policy = RetryPolicy(
            maxAttempts: 3, baseDelay: .seconds(1), maxDelay: .seconds(10), jitter: .none, maxElapsed: .seconds(3))
        let calls = LockedValue<[Duration]>([])
        let store = KeyedStore(
            cache: MemoryCache<Int, String>(),
            manager: FlowableDataStateManager(
                fetchPolicy: FetchPolicy(retry: policy, concurrencyLimit: limit, clock: clock))
        ) { _ -> String in
            let call = calls.withLock { calls -> Int in
                calls.append(clock.now.offset)
                return calls.count
            }
            if call == 1 { throw AdvisedError.transient }
            return "value"
        }
        let caller = Task { try await store[1].requireData() }
        await clock.sleepers(atLeast: 1)
        // During the backoff, another caller of the limit takes its only permit.
        let gate = Gate()
        let holder = Task { try await limit.run { await gate.wait() } }
        await gate.arrived()
        clock.advance(by: .seconds(1))
        while limit.queuedCount == 0, !Task.isCancelled { await Task.yield() }
        clock.advance(by: .seconds(10))
        gate.open()
        try await holder.value
        #expect(try await caller.value == "value")
        #expect(calls.withLock { $0 } == [.zero, .seconds(11)])
    }
}

/// An observer whose reports take time: it moves a manual clock on by `cost` as it observes a retry
/// being scheduled.
private final class SlowObserver: StoreEventObserver {
    let clock: ManualClock
    let cost: Duration

    init(clock: ManualClock, cost: Duration) {
        self.clock = clock
        self.cost = cost
    }

    func observe(_ event: StoreEvent) {
        if case .retryScheduled = event.kind { clock.advance(by: cost) }
    }
}

/// A manual clock that counts how often its time is read.
private struct CountingClock: Clock {
    let base = ManualClock()
    private let readCount = LockedValue(0)

    var now: ManualClock.Instant {
        readCount.withLock { $0 += 1 }
        return base.now
    }

    var minimumResolution: Duration { base.minimumResolution }

    /// How often ``now`` was read.
    var reads: Int { readCount.withLock { $0 } }

    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}
