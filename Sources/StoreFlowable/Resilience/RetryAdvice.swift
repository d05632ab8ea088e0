/// What an error says about calling the origin again: not at all, after the policy's own backoff, or
/// after a delay the server asked for.
///
/// Errors give it by conforming to ``RetryableError``; ``RetryPolicy/defaultShouldRetry(_:)`` follows
/// it.
public enum RetryAdvice: Sendable, Hashable {
    /// The failure is permanent (a bad request, a missing resource, a body that does not decode), or
    /// retrying could repeat a side effect: do not call the origin again.
    case doNotRetry
    /// The failure is transient (a timeout, a reset connection, an overloaded server): retry after the
    /// policy's backoff.
    case retry
    /// The server asked to be called again after `delay` (an HTTP `Retry-After`): retry then, but never
    /// later than the policy's ``RetryPolicy/maxDelay``.
    case retryAfter(Duration)
}
