import NIOCore
import NIOHTTP1
import StoreFlowable
import StoreFlowableFoundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

    /// The error a client sees when reading its request's body failed with `error`, or `nil` when
    /// `error` is not about the connection or the body's framing (Hummingbird's 413 for a body over the
    /// limit stays what it is).
    ///
    /// - The connection closed before the body was whole: NIO's HTTP parser ends the body with
    ///   `HTTPParserError.invalidEOFState` (what a client that closes mid-body causes), or the read fails
    ///   with a reset (`IOError` `ECONNRESET`, `ECONNABORTED`, `EPIPE`), with `ETIMEDOUT` (the kernel gave
    ///   up on a peer that stopped answering: ``CatalogConfiguration/deadPeerTimeout``) or on a channel
    ///   already closed (`ChannelError`): ``clientAborted(_:)``.
    /// - Any other `HTTPParserError` (a chunk size that is not hexadecimal, …): the client sent a body
    ///   that is not HTTP, ``invalidProduct(_:)`` (the only body the service reads is a product's).
    ///
    /// Only for the body's read: elsewhere a reset or a timed-out connection is the upstream's or a
    /// cache's, which ``init(classifying:)`` handles.
    ///
    /// - Parameter error: What reading the body threw.
    init?(readingBodyFailedWith error: any Error) {
        switch error {
        case HTTPParserError.invalidEOFState:
            self = .clientAborted("\(error)")
        case let error as HTTPParserError:
            self = .invalidProduct("the body is not valid HTTP: \(error)")
        case let error as IOError where Self.abortCodes.contains(error.errnoCode):
            self = .clientAborted("\(error)")
        case ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed, ChannelError.eof, ChannelError.inputClosed:
            self = .clientAborted("\(error)")
        default:
            return nil
        }
    }

    /// The `errno` values of a connection the peer reset, or the kernel gave up on.
    private static let abortCodes: Set<Int32> = [ECONNRESET, ECONNABORTED, EPIPE, ETIMEDOUT]
}
