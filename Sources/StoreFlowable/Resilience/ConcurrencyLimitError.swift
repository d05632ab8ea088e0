/// The error a ``ConcurrencyLimit`` throws itself, as opposed to the errors of the operations it runs,
/// which reach the callers unchanged.
public enum ConcurrencyLimitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every permit was taken and `maxQueued` callers were already waiting, so the caller was turned
    /// away without waiting and without running its operation (load shedding).
    ///
    /// The default retry advice (``RetryPolicy/defaultAdvice(for:)``) does not retry it: an origin
    /// already that busy is not helped by more calls. A store with a freshness policy serves its stale
    /// value in place of this error inside the stale-if-error window, as for any failed fetch.
    ///
    /// - Parameters:
    ///   - maxConcurrent: The limit's ``ConcurrencyLimit/maxConcurrent``.
    ///   - maxQueued: The limit's ``ConcurrencyLimit/maxQueued``.
    case queueFull(maxConcurrent: Int, maxQueued: Int)

    /// The error in one line, for logs.
    public var description: String {
        switch self {
        case .queueFull(let maxConcurrent, let maxQueued):
            "the concurrency limit is full: \(maxConcurrent) operations run and \(maxQueued) callers wait"
        }
    }
}
