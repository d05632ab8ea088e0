#if canImport(FoundationNetworking)
    public import FoundationNetworking
#else
    public import Foundation
#endif

/// Sends HTTP requests for a ``SimpleNetworkLoader``: the seam where any HTTP client plugs in.
///
/// ``URLSessionTransport`` is the one this product ships. A server app that already uses
/// AsyncHTTPClient adapts it in a few lines (`Docs/Loaders.md` shows the adapter), so this package
/// never depends on it.
///
/// A transport promises:
/// - It reads at most `maxBodySize` bytes of a body and throws ``NetworkLoaderError/bodyTooLarge(limit:)``
///   as soon as a body is longer (or says it is, in `Content-Length`).
/// - A request that timed out throws ``NetworkLoaderError/timedOut``; a connection the server refused
///   throws ``NetworkLoaderError/connectionRefused``; any other failure throws
///   ``NetworkLoaderError/transportFailed(underlying:)``.
/// - When the calling task is cancelled, the request is cancelled and `CancellationError` is thrown,
///   promptly.
/// - Any status is a response, not an error: the loader decides what a status means.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and reads the whole response.
    ///
    /// - Parameters:
    ///   - request: The request: method, URL, headers, body and `timeoutInterval`.
    ///   - maxBodySize: The most body bytes to read.
    /// - Returns: The response.
    /// - Throws: ``NetworkLoaderError`` as listed above, or `CancellationError` when the calling task
    ///   is cancelled.
    func send(_ request: URLRequest, maxBodySize: Int) async throws -> HTTPResponse
}
