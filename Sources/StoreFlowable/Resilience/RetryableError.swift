/// An error that knows whether the origin call that threw it may be retried.
///
/// The default retry predicate (``RetryPolicy/defaultShouldRetry(_:)``) retries only errors that
/// conform and advise it: the core cannot tell a timeout from a bad request by itself.
/// `NetworkLoaderError` of `StoreFlowableFoundation` conforms; make your own origin's errors conform
/// to have them retried by the default policy.
public protocol RetryableError: Error {
    /// Whether and when to call the origin again after this error.
    var retryAdvice: RetryAdvice { get }
}
