/// Runs the origin calls of one fetch under a ``FetchPolicy``: each attempt inside the concurrency
/// limit, retries after a backoff on the policy's clock, and the fetch events.
///
/// It runs on the fetch's task: when the store cancels that task (nobody waits any more), a queued
/// attempt leaves the limit's queue, a backoff sleep ends, and no further origin call is made.
struct OriginCalls: Sendable {
    let policy: FetchPolicy
    let report: EventReporter

    /// Calls `call` until it returns, its error is not to be retried, the attempts run out or the task
    /// is cancelled.
    ///
    /// - Parameter call: One origin call.
    /// - Returns: What the successful call returned.
    /// - Throws: The last attempt's error; `CancellationError` when the task was cancelled during a
    ///   queue wait or a backoff.
    func run<Value>(_ call: () async throws -> Value) async throws -> Value {
        // A store that uses none of it (one attempt, no limit, no observer) calls the origin as it did
        // before fetch policies existed: no attempt scope, no clock read, no allocation.
        if policy.retry.attemptLimit == 1, policy.concurrencyLimit == nil, report.observer == nil {
            return try await call()
        }
        return try await run(on: policy.clock, call)
    }

    private func run<C: Clock<Duration>, Value>(on clock: C, _ call: () async throws -> Value) async throws
        -> Value
    {
        var attempt = 1
        // Read only when the retries are bounded in time and there may be one.
        let began = policy.retry.maxElapsed == nil || policy.retry.attemptLimit == 1 ? nil : clock.now
        while true {
            let refusal = RetryRefusal()
            // Set when the origin is called (after any wait for the concurrency limit): the events
            // measure the call itself.
            var start: C.Instant?
            do {
                let value = try await FetchAttempt.$scoped.withValue(FetchAttempt(number: attempt, refusal: refusal)) {
                    try await callOnce(attempt: attempt, clock: clock, startedAt: &start, call)
                }
                report(.fetchSucceeded(attempt: attempt, duration: elapsed(since: start, on: clock)))
                return value
            } catch {
                // A cancelled fetch ends here, whatever its error: nobody waits for it any more.
                // A cancellation is never retried, whatever a custom `retryAdvice` says: the origin's own
                // `CancellationError` (a timeout inside its client) is reported, not repeated.
                var failedAt: C.Instant?
                let delay: Duration?
                if Task.isCancelled || refusal.wasRefused || error is CancellationError {
                    delay = nil
                } else {
                    // With `maxElapsed`, the bound and the backoff are both reckoned from this reading
                    // of the clock: time spent reporting the failure cannot push the retry past it.
                    if began != nil, attempt < policy.retry.attemptLimit { failedAt = clock.now }
                    delay = policy.retry.delay(
                        afterFailedAttempt: attempt, advice: policy.retry.retryAdvice(error),
                        elapsed: began.flatMap { began in failedAt.map { began.duration(to: $0) } } ?? .zero)
                }
                // A fetch cancelled while it waited for the limit never called the origin.
                if start != nil {
                    report(
                        .fetchFailed(
                            attempt: attempt, duration: elapsed(since: start, on: clock), error: error,
                            willRetry: delay != nil))
                }
                guard let delay else { throw error }
                attempt += 1
                report(.retryScheduled(attempt: attempt, delay: delay))
                do {
                    if let failedAt {
                        try await clock.sleep(until: failedAt.advanced(by: delay), tolerance: nil)
                    } else {
                        try await clock.sleep(for: delay)
                    }
                } catch {
                    // Only cancellation ends a sleep early: the fetch is abandoned.
                    throw CancellationError()
                }
                try Task.checkCancellation()
            }
        }
    }

    private func elapsed<C: Clock<Duration>>(since start: C.Instant?, on clock: C) -> Duration {
        start.map { $0.duration(to: clock.now) } ?? .zero
    }

    /// One attempt: inside the concurrency limit when there is one. `start` is set (when an observer
    /// listens) as the origin is called.
    private func callOnce<C: Clock<Duration>, Value>(
        attempt: Int, clock: C, startedAt start: inout C.Instant?, _ call: () async throws -> Value
    ) async throws -> Value {
        guard let limit = policy.concurrencyLimit else {
            if report.observer != nil { start = clock.now }
            report(.fetchStarted(attempt: attempt))
            return try await call()
        }
        var startedAt: C.Instant?
        defer { start = startedAt }
        return try await limit.run {
            if report.observer != nil { startedAt = clock.now }
            report(.fetchStarted(attempt: attempt))
            return try await call()
        }
    }
}
