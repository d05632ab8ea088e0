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
}
