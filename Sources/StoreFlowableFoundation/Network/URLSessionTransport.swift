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
///
/// How it keeps the ``HTTPTransport`` promises, on Apple platforms and on Linux alike:
/// - The body bound is checked as the body arrives (a data task and its delegate; `URLSession.bytes(for:)`
///   does not exist in Linux's `FoundationNetworking`), not after the download. The moment a body passes
///   the bound, `send` throws ``NetworkLoaderError/bodyTooLarge(limit:)``, drops what it read and
///   cancels the task. On Linux the download does not stop at that very byte: `FoundationNetworking`
///   hands the delegate the body on another queue and its cancel waits for its own work queue, so a
///   fast server gets further before the connection closes (tens of MB over loopback in the tests,
///   held briefly in the session's queued callbacks, never in the response). A `Content-Length` over
///   the bound ends the request before any body is read: the transport cancels the task itself,
///   because Linux's `URLSession` does not end a task whose delegate answers `.cancel`.
/// - A cancelled caller cancels its data task; the connection is closed (the tests check that the
///   server sees it go) and `send` throws `CancellationError` without waiting for the server.
/// - `URLError.timedOut` (the request's `timeoutInterval` without progress) is
///   ``NetworkLoaderError/timedOut``; `URLError.cannotConnectToHost` (nothing listens, or the server
///   refused) is ``NetworkLoaderError/connectionRefused``. A server that takes the connection and closes
///   it without answering is ``NetworkLoaderError/transportFailed(underlying:)``
///   (`URLError.badServerResponse` on Linux), as is every other `URLError`.
///
/// It is a class, not a struct: it owns its session and invalidates it when released.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let transfers: URLSessionTransferDelegate

    /// Creates a transport with a session of its own.
    ///
    /// There is no initializer taking an existing session such as `URLSession.shared`: reading a body
    /// as it arrives needs the session's delegate, which is fixed when a session is made, and Linux's
    /// `URLSession` does not call a task's own delegate for the data of a session without one.
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
