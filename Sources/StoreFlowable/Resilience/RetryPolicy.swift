/// How a store retries a failed origin fetch: how many attempts, how long it waits between them
/// (exponential backoff with a cap and jitter), and which errors are worth another attempt.
///
/// ```swift
/// let policy = RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(100), maxDelay: .seconds(5))
/// ```
///
/// After attempt `n` fails with an error that ``retryAdvice`` says to retry, the store sleeps
/// `min(maxDelay, baseDelay × 2ⁿ⁻¹)`, with ``jitter`` applied, on the fetch policy's clock, then calls
/// the origin again; a server-supplied delay (``RetryAdvice/retryAfter(_:)``) replaces that backoff,
/// capped at ``maxDelay``. All attempts belong to one fetch: callers and subscribers that arrive during
/// a backoff join it, subscribers see `.loading` throughout and `.error` only after the last attempt,
/// and the fetch ends (with no further origin call) as soon as nobody waits for it any more, even in
/// the middle of a backoff.
///
/// A fetch may also be bounded in time: with ``maxElapsed``, no retry starts later than that after the
/// fetch began, so a slow origin (each attempt running into its timeout) cannot keep a caller waiting
/// for `maxAttempts` timeouts.
///
/// Values out of range are clamped, never trapped on: fewer than one attempt counts as one, negative
/// delays as zero, a negative `maxElapsed` as zero, a random number outside `0...1` is clamped into it,
/// and NaN counts as 0.
public struct RetryPolicy: Sendable {
    /// The most origin calls one fetch makes, the first included; `1` never retries.
    public var maxAttempts: Int
    /// The backoff before the first retry; it doubles for each later one.
    public var baseDelay: Duration
    /// The longest the store waits before a retry, whether the backoff or the server asked for more.
    public var maxDelay: Duration
    /// The randomness added to the backoff.
    public var jitter: Jitter
    /// Decides, for the error an attempt threw, whether and when to retry. The store never retries a
    /// `CancellationError`, whatever this says.
    public var retryAdvice: @Sendable (any Error) -> RetryAdvice
    /// A uniformly distributed number in `0..<1`, for the jitter; inject a fixed sequence in tests.
    public var random: @Sendable () -> Double
    /// The latest a retry may start, measured from the moment the fetch began (before its first
    /// attempt waited for the concurrency limit), on the fetch policy's clock; `nil` (the default) for
    /// no bound, when only ``maxAttempts`` ends the retries.
    ///
    /// After a failed attempt, the store retries only if the time elapsed since the fetch began plus
    /// the delay before the retry is at most `maxElapsed`; otherwise the failure is the fetch's outcome.
    /// Every wait counts: for the limit's permit, in origin calls, in backoffs. It bounds when the last
    /// attempt starts, not when it ends: the longest a fetch takes is about `maxElapsed` plus one
    /// attempt (its wait for a permit included). Reading the clock for it costs one read as the fetch
    /// begins and one after each failure that may be retried (the backoff is measured from it), and
    /// nothing when it is `nil` or ``maxAttempts`` is 1.
    public var maxElapsed: Duration?

    /// Creates a retry policy.
    ///
    /// - Parameters:
    ///   - maxAttempts: The most origin calls one fetch makes, the first included (3 by default).
    ///   - baseDelay: The backoff before the first retry (200 ms by default); it doubles each time.
    ///   - maxDelay: The cap on every delay, a server-supplied one included (10 s by default).
    ///   - jitter: The randomness added to the backoff (``Jitter/full`` by default).
    ///   - retryAdvice: Whether and when to retry after an error; ``defaultAdvice(for:)`` by default.
    ///   - random: A uniform random number in `0..<1`; the system generator by default.
    ///   - maxElapsed: The latest a retry may start after the fetch began; no bound by default.
    public init(
        maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(10),
        jitter: Jitter = .full,
        retryAdvice: @escaping @Sendable (any Error) -> RetryAdvice = RetryPolicy.defaultAdvice(for:),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        maxElapsed: Duration? = nil
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.retryAdvice = retryAdvice
        self.random = random
        self.maxElapsed = maxElapsed
    }

    /// A policy that never retries: one origin call per fetch. The default of every manager.
    public static var never: RetryPolicy { RetryPolicy(maxAttempts: 1) }

    /// The default decision: what a ``RetryableError`` advises, and ``RetryAdvice/doNotRetry`` for
    /// every other error.
    ///
    /// A cancellation (`CancellationError`, ``StoreFlowableError/originCancelled``) is never retried,
    /// and neither is an error the core cannot classify: an unknown error may be permanent. With
    /// `StoreFlowableFoundation`, `NetworkLoaderError` advises retrying timeouts, refused and broken
    /// connections, and the statuses 408, 429, 500, 502, 503 and 504 (honouring `Retry-After`).
    ///
    /// - Parameter error: The error an origin call threw.
    /// - Returns: What to do next.
    @Sendable
    public static func defaultAdvice(for error: any Error) -> RetryAdvice {
        switch error {
        case is CancellationError, StoreFlowableError.originCancelled: .doNotRetry
        case let error as any RetryableError: error.retryAdvice
        default: .doNotRetry
        }
    }

    /// The attempts a fetch makes at most: ``maxAttempts``, at least 1.
    var attemptLimit: Int { max(1, maxAttempts) }

    /// How long to wait before the attempt after `attempt` failed with advice `advice`, or `nil` when
    /// there is no next attempt (the advice says not to retry, `attempt` was the last, or the retry
    /// would start after ``maxElapsed``).
    ///
    /// - Parameters:
    ///   - attempt: The number of the attempt that failed, from 1.
    ///   - advice: What the failure's error advised.
    ///   - elapsed: The time since the fetch began, compared with ``maxElapsed``; zero by default.
    /// - Returns: The delay, between zero and ``maxDelay``; `nil` for no retry.
    public func delay(afterFailedAttempt attempt: Int, advice: RetryAdvice, elapsed: Duration = .zero) -> Duration? {
        guard let delay = unboundedDelay(afterFailedAttempt: attempt, advice: advice) else { return nil }
        if let maxElapsed {
            // `elapsed + delay > bound`, without the sum, which traps beyond `Duration`'s range.
            let bound = max(.zero, maxElapsed)
            if delay > bound || max(.zero, elapsed) > bound - delay { return nil }
        }
        return delay
    }

    /// ``delay(afterFailedAttempt:advice:elapsed:)`` without ``maxElapsed``.
    private func unboundedDelay(afterFailedAttempt attempt: Int, advice: RetryAdvice) -> Duration? {
        guard attempt < attemptLimit else { return nil }
        let cap = max(.zero, maxDelay)
        switch advice {
        case .doNotRetry:
            return nil
        case .retryAfter(let asked):
            return min(cap, max(.zero, asked))
        case .retry:
            let backoff = min(cap, Self.doubling(max(.zero, baseDelay), times: attempt - 1, cap: cap))
            // NaN (which `min` and `max` pass through) counts as 0: converting it would trap.
            let drawn = random()
            let unit = drawn.isNaN ? 0 : min(max(drawn, 0), 1)
            switch jitter {
            case .none: return backoff
            case .full: return min(backoff, Self.scaled(backoff, by: unit))
            case .equal: return min(backoff, backoff / 2 + Self.scaled(backoff / 2, by: unit))
            }
        }
    }

    /// `delay` doubled `times` times, stopping at `cap` (so it never overflows).
    private static func doubling(_ delay: Duration, times: Int, cap: Duration) -> Duration {
        var delay = delay
        for _ in 0..<max(0, times) {
            if delay == .zero { break }
            if delay >= cap / 2 { return cap }
            delay = delay * 2
        }
        return delay
    }

    /// `duration × factor` (a factor in `0...1`), to the nanosecond.
    private static func scaled(_ duration: Duration, by factor: Double) -> Duration {
        // Also keeps the conversion below in range: `Double(Int64.max)` rounds above `Int64.max`.
        if factor >= 1 { return duration }
        // Beyond `Int64.max` seconds `components` traps; at that size a nanosecond does not matter.
        if duration > .seconds(Int64.max) { return duration * factor }
        let (seconds, attoseconds) = duration.components
        let scaledSeconds = Double(seconds) * factor
        let whole = scaledSeconds.rounded(.down)
        // Nanoseconds from the fraction of the scaled seconds and the scaled sub-second part.
        let nanoseconds = ((scaledSeconds - whole) * 1e9 + Double(attoseconds) / 1e9 * factor).rounded()
        return .seconds(Int64(whole)) + .nanoseconds(Int64(nanoseconds))
    }
}
