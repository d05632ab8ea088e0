import Testing

@testable import StoreFlowable

@Suite("RetryPolicy")
struct RetryPolicyTests {
    private func policy(
        attempts: Int = 5, base: Duration = .milliseconds(100), cap: Duration = .seconds(1),
        jitter: RetryPolicy.Jitter = .none, random: @escaping @Sendable () -> Double = { 0.5 }
    ) -> RetryPolicy {
        RetryPolicy(maxAttempts: attempts, baseDelay: base, maxDelay: cap, jitter: jitter, random: random)
    }

    @Test func theBackoffDoublesUpToTheCap() {
        let delays = (1...5).map { policy(attempts: 6).delay(afterFailedAttempt: $0, advice: .retry) }
        #expect(
            delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1)])
    }

    @Test func theLastAttemptHasNoRetry() {
        let policy = policy(attempts: 3)
        #expect(policy.delay(afterFailedAttempt: 2, advice: .retry) != nil)
        #expect(policy.delay(afterFailedAttempt: 3, advice: .retry) == nil)
        #expect(RetryPolicy.never.delay(afterFailedAttempt: 1, advice: .retry) == nil)
    }

    @Test func fullJitterScalesTheWholeBackoff() {
        let policy = policy(jitter: .full, random: { 0.25 })
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retry) == .milliseconds(25))
        #expect(policy.delay(afterFailedAttempt: 3, advice: .retry) == .milliseconds(100))
    }

    @Test func equalJitterKeepsHalfTheBackoff() {
        let policy = policy(jitter: .equal, random: { 0.5 })
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retry) == .milliseconds(75))
        #expect(policy.delay(afterFailedAttempt: 2, advice: .retry) == .milliseconds(150))
    }

    @Test func aServerDelayIsHonouredUpToTheCapWithoutJitter() {
        let policy = policy(cap: .seconds(5), jitter: .full, random: { 0 })
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retryAfter(.seconds(2))) == .seconds(2))
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retryAfter(.seconds(3_600))) == .seconds(5))
        #expect(policy.delay(afterFailedAttempt: 1, advice: .retryAfter(.seconds(-1))) == .zero)
        #expect(policy.delay(afterFailedAttempt: 5, advice: .retryAfter(.seconds(1))) == nil)
    }

    @Test func doNotRetryEndsTheFetch() {
        #expect(policy().delay(afterFailedAttempt: 1, advice: .doNotRetry) == nil)
    }

    @Test func badValuesAreClampedNotTrappedOn() {
        #expect(policy(attempts: -3).delay(afterFailedAttempt: 1, advice: .retry) == nil)
        #expect(policy(base: .seconds(-1)).delay(afterFailedAttempt: 1, advice: .retry) == .zero)
        #expect(policy(cap: .seconds(-1)).delay(afterFailedAttempt: 1, advice: .retry) == .zero)
        let wild = policy(jitter: .full, random: { 7 })
        #expect(wild.delay(afterFailedAttempt: 1, advice: .retry).map { $0 <= .milliseconds(100) } == true)
        let negative = policy(jitter: .full, random: { -7 })
        #expect(negative.delay(afterFailedAttempt: 1, advice: .retry) == .zero)
    }

    @Test func aLongRunOfAttemptsNeverOverflows() {
        let huge = policy(attempts: .max, base: .seconds(1), cap: .seconds(Int64.max))
        #expect(huge.delay(afterFailedAttempt: 10_000, advice: .retry) == .seconds(Int64.max))
        let capped = policy(attempts: .max)
        #expect(capped.delay(afterFailedAttempt: .max - 1, advice: .retry) == .seconds(1))
    }

    @Test func maxElapsedAllowsOnlyRetriesThatStartWithinIt() {
        var bounded = policy(attempts: 10)
        bounded.maxElapsed = .seconds(1)
        #expect(bounded.delay(afterFailedAttempt: 1, advice: .retry, elapsed: .milliseconds(900)) == .milliseconds(100))
        #expect(bounded.delay(afterFailedAttempt: 1, advice: .retry, elapsed: .milliseconds(901)) == nil)
        #expect(bounded.delay(afterFailedAttempt: 3, advice: .retry, elapsed: .milliseconds(600)) == .milliseconds(400))
        #expect(bounded.delay(afterFailedAttempt: 3, advice: .retry, elapsed: .milliseconds(601)) == nil)
        // A server's delay counts the same way.
        #expect(bounded.delay(afterFailedAttempt: 1, advice: .retryAfter(.milliseconds(999)), elapsed: .zero) != nil)
        #expect(
            bounded.delay(afterFailedAttempt: 1, advice: .retryAfter(.seconds(1)), elapsed: .milliseconds(1)) == nil)
        // Without a bound, elapsed time changes nothing.
        #expect(policy(attempts: 10).delay(afterFailedAttempt: 1, advice: .retry, elapsed: .seconds(3_600)) != nil)
        // A negative bound counts as zero: only an immediate retry at the start fits.
        bounded.maxElapsed = .seconds(-5)
        #expect(bounded.delay(afterFailedAttempt: 1, advice: .retry, elapsed: .zero) == nil)
        #expect(bounded.delay(afterFailedAttempt: 1, advice: .retryAfter(.zero), elapsed: .seconds(-1)) == .zero)
        // Huge values never trap.
        bounded.maxElapsed = .seconds(Int64.max)
        #expect(bounded.delay(afterFailedAttempt: 1, advice: .retry, elapsed: .seconds(Int64.max)) == nil)
    }

    @Test func theDefaultRetriesOnlyWhatAnErrorAdvises() {
        #expect(RetryPolicy.defaultAdvice(for: AdvisedError.transient) == .retry)
        #expect(
            RetryPolicy.defaultAdvice(for: AdvisedError(retryAdvice: .retryAfter(.seconds(3))))
                == .retryAfter(.seconds(3)))
        #expect(RetryPolicy.defaultAdvice(for: AdvisedError.permanent) == .doNotRetry)
        #expect(RetryPolicy.defaultAdvice(for: UnclassifiedError()) == .doNotRetry)
        #expect(RetryPolicy.defaultAdvice(for: CancellationError()) == .doNotRetry)
        #expect(RetryPolicy.defaultAdvice(for: StoreFlowableError.originCancelled) == .doNotRetry)
    }
}
