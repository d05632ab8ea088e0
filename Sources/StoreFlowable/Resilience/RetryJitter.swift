extension RetryPolicy {
    /// How much randomness is added to a backoff delay, so that many clients that failed together do
    /// not retry together.
    public enum Jitter: Sendable, Hashable {
        /// The delay is exactly the exponential backoff.
        case none
        /// The delay is uniformly random between zero and the exponential backoff ("full jitter").
        case full
        /// The delay is half the exponential backoff plus a uniformly random part of up to the other
        /// half ("equal jitter"): never shorter than half the backoff.
        case equal
    }
}
