#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

/// An ``HTTPTransport`` over `URLSession` (from `FoundationNetworking` on Linux).
///
/// It streams each body through a session delegate, so a body longer than the limit is never read in
/// full: the request is cancelled as soon as it passes the limit, or when its `Content-Length` says it
/// will. The session is its own, made from the configuration it is given (a session's delegate is set
/// when the session is made, so a shared session cannot be used), and is invalidated when the transport
/// is released.
///
/// Any number of requests may run at once from any tasks.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let transfers: URLSessionTransferDelegate

    /// Creates a transport with a session of its own.
    ///
    /// - Parameter configuration: The session's configuration; `.default` by default. Its caching
    ///   applies: pass `.ephemeral` to keep no HTTP cache or cookies on disk.
    public init(configuration: URLSessionConfiguration = .default) {
        transfers = URLSessionTransferDelegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: transfers, delegateQueue: queue)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request` and reads at most `maxBodySize` body bytes.
    ///
    /// - Parameters:
    ///   - request: The request; its `timeoutInterval` bounds how long the request may go without
    ///     progress.
    ///   - maxBodySize: The most body bytes to read.
    /// - Returns: The response.
    /// - Throws: ``NetworkLoaderError/bodyTooLarge(limit:)``, ``NetworkLoaderError/timedOut``,
    ///   ``NetworkLoaderError/connectionRefused``, ``NetworkLoaderError/transportFailed(underlying:)``;
    ///   `CancellationError` when the calling task is cancelled (the request is cancelled too).
    public func send(_ request: URLRequest, maxBodySize: Int) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let task = session.dataTask(with: request)
        let transfer = URLSessionTransfer(limit: max(0, maxBodySize))
        transfers.register(transfer, for: task)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.start(continuation) { task.resume() }
            }
        } onCancel: {
            task.cancel()
        }
        switch outcome {
        case .success(let response):
            return response
        case .failure(let error):
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
    }
}
