public import StoreFlowable

/// How long ``PostgresCache/listenForChanges(retry:clock:onChange:)`` waits before it reconnects after
/// its connection failed: an exponential backoff with a cap and jitter, on the listener's clock.
///
/// ```swift
/// let retry = PostgresCacheListenerRetry(baseDelay: .seconds(1), maxDelay: .seconds(60))
/// ```
///
/// After the `n`-th failure in a row (a lost connection, then each failed attempt to connect and
/// listen), the listener waits `min(maxDelay, baseDelay × 2ⁿ⁻¹)` with ``jitter`` applied, as a
/// ``RetryPolicy`` does. The count starts again once the listener listens. It retries for as long as
/// its task runs: there is no last attempt.
///
/// Values out of range are clamped, never trapped on: negative delays count as zero, and a random
/// number outside `0...1` is clamped into it (NaN counts as 0).
public struct PostgresCacheListenerRetry: Sendable {
    /// The wait after the first failure; it doubles after each further one.
    public var baseDelay: Duration
    /// The longest wait.
    public var maxDelay: Duration
    /// The randomness added to each wait, so that many instances that lost the server together do not
    /// reconnect together.
    public var jitter: RetryPolicy.Jitter
    /// A uniformly distributed number in `0..<1`, for the jitter; inject a fixed one in tests.
    public var random: @Sendable () -> Double

    /// Creates a backoff.
    ///
    /// - Parameters:
    ///   - baseDelay: The wait after the first failure (500 ms by default); it doubles each time.
    ///   - maxDelay: The longest wait (30 s by default).
    ///   - jitter: The randomness added (``RetryPolicy/Jitter/equal`` by default: between half the
    ///     backoff and all of it, so never a busy loop).
    ///   - random: A uniform random number in `0..<1`; the system generator by default.
    public init(
        baseDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(30),
        jitter: RetryPolicy.Jitter = .equal,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.random = random
    }

    /// The default backoff: 500 ms, doubling up to 30 s, with equal jitter.
    public static var `default`: PostgresCacheListenerRetry { PostgresCacheListenerRetry() }

    /// How long to wait after the `failures`-th failure in a row.
    ///
    /// - Parameter failures: How many times in a row the listener failed, from 1.
    /// - Returns: The wait, between zero and ``maxDelay``.
    public func delay(afterFailures failures: Int) -> Duration {
        let policy = RetryPolicy(
            maxAttempts: .max, baseDelay: baseDelay, maxDelay: maxDelay, jitter: jitter, random: random)
        return policy.delay(afterFailedAttempt: max(1, min(failures, .max - 1)), advice: .retry) ?? max(.zero, maxDelay)
    }
}
