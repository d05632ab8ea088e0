#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Why a ``SimpleNetworkLoader`` (or an ``HTTPTransport``) could not produce a value.
///
/// A cancelled caller never gets one of these: it gets `CancellationError`.
public enum NetworkLoaderError: Error, Sendable {
    /// The request for the key could not be made: `createRequest` threw `underlying`.
    case invalidRequest(underlying: any Error)
    /// The server answered with a status outside 200–299 (including 304: the loader sends no
    /// conditional requests). `body` is at most ``NetworkLoaderError/errorBodyLimit`` bytes of the
    /// response's body, for logs and error messages.
    case unacceptableStatus(code: Int, headers: [String: String], body: Data)
    /// The body of a successful response could not be decoded: the decoder threw `underlying`.
    case decodingFailed(underlying: any Error)
    /// The request timed out (its `timeoutInterval`, or the transport's own deadline).
    case timedOut
    /// Nothing listens at the address, or the server refused the connection.
    case connectionRefused
    /// The response's body is longer than `limit` bytes; reading stopped there.
    case bodyTooLarge(limit: Int)
    /// Any other failure of the transport.
    case transportFailed(underlying: any Error)

    /// The most bytes of an error response's body kept in ``unacceptableStatus(code:headers:body:)``:
    /// 64 KiB.
    public static let errorBodyLimit = 64 * 1024
}

extension NetworkLoaderError: CustomStringConvertible {
    /// A one-line description naming the failure, for logs.
    public var description: String {
        switch self {
        case .invalidRequest(let underlying): "the request could not be made: \(underlying)"
        case .unacceptableStatus(let code, _, let body):
            "HTTP \(code)" + (body.isEmpty ? "" : ": \(String(decoding: body.prefix(200), as: UTF8.self))")
        case .decodingFailed(let underlying): "the response could not be decoded: \(underlying)"
        case .timedOut: "the request timed out"
        case .connectionRefused: "the connection was refused"
        case .bodyTooLarge(let limit): "the response body is longer than \(limit) bytes"
        case .transportFailed(let underlying): "the request failed: \(underlying)"
        }
    }
}
