public import StoreFlowable

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension NetworkLoaderError: RetryableError {
    /// Whether a store's retry policy should call the origin again after this error.
    ///
    /// - ``timedOut``, ``connectionRefused`` and ``transportFailed(underlying:)`` (a reset or broken
    ///   connection): ``RetryAdvice/retry``.
    /// - ``unacceptableStatus(code:headers:body:)`` with 408, 429, 500, 502, 503 or 504: retry, after
    ///   the delay its `Retry-After` header asks for when it has one (seconds or an HTTP date; the
    ///   policy caps it at its `maxDelay`).
    /// - Every other status, ``invalidRequest(underlying:)``, ``decodingFailed(underlying:)`` and
    ///   ``bodyTooLarge(limit:)``: ``RetryAdvice/doNotRetry`` (the same request would fail the same way).
    ///
    /// A ``SimpleNetworkLoader`` whose request's method is not idempotent (`POST`, `PATCH`) forbids
    /// the retry of its attempt whatever this says (see `FetchAttempt/forbidRetry()`).
    public var retryAdvice: RetryAdvice {
        switch self {
        case .timedOut, .connectionRefused, .transportFailed:
            return .retry
        case .unacceptableStatus(let code, let headers, _):
            guard [408, 429, 500, 502, 503, 504].contains(code) else { return .doNotRetry }
            guard let value = headers["retry-after"], let delay = RetryAfter.delay(from: value, now: Date()) else {
                return .retry
            }
            return .retryAfter(delay)
        case .invalidRequest, .decodingFailed, .bodyTooLarge:
            return .doNotRetry
        }
    }
}
