import StoreFlowable
import StoreFlowableFoundation

extension CatalogError {
    /// The error a client sees for `error`, thrown by a store, the upstream client or a cache.
    ///
    /// - A ``CatalogError`` stays what it is (the upstream client throws ``productNotFound(id:)`` for a
    ///   404, the upstream page checks throw ``upstreamMalformed(_:)``).
    /// - `NetworkLoaderError`: timeouts, refused or broken connections and the statuses 408, 429 and 5xx
    ///   are ``upstreamUnavailable(_:)``; any other status, a body that does not decode or is too large
    ///   is ``upstreamMalformed(_:)``; a request that could not be made is ``internalFailure(_:)``.
    /// - `StoreFlowableError.cacheWriteFailed` and `.cacheReadFailed` are ``cacheUnavailable(_:)``.
    /// - `ConcurrencyLimitError.queueFull` (too many upstream requests already waiting) is
    ///   ``upstreamUnavailable(_:)``.
    /// - Anything else is ``internalFailure(_:)``, with its description.
    ///
    /// Cancellation is not classified: callers let `CancellationError` through before calling this.
    ///
    /// - Parameter error: What a store, the upstream client or a cache threw.
    public init(classifying error: any Error) {
        switch error {
        case let error as CatalogError:
            self = error
        case let error as NetworkLoaderError:
            self = Self.classifying(error)
        case StoreFlowableError.cacheWriteFailed(let underlying), StoreFlowableError.cacheReadFailed(let underlying):
            self = .cacheUnavailable("\(underlying)")
        case let error as ConcurrencyLimitError:
            self = .upstreamUnavailable("\(error)")
        case let error as BatchedOriginError:
            self = .upstreamMalformed("\(error)")
        default:
            self = .internalFailure("\(error)")
        }
    }

    /// The error a client sees for a failure of the upstream call.
    ///
    /// - Parameter error: What the loader threw.
    /// - Returns: ``upstreamUnavailable(_:)``, ``upstreamMalformed(_:)`` or ``internalFailure(_:)``.
    private static func classifying(_ error: NetworkLoaderError) -> CatalogError {
        switch error {
        case .timedOut, .connectionRefused, .transportFailed:
            return .upstreamUnavailable("\(error)")
        case .unacceptableStatus(let code, _, _) where code == 408 || code == 429 || (500...599).contains(code):
            return .upstreamUnavailable("\(error)")
        case .unacceptableStatus, .decodingFailed, .bodyTooLarge:
            return .upstreamMalformed("\(error)")
        case .invalidRequest:
            return .internalFailure("\(error)")
        }
    }
}
