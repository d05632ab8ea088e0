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
///   held briefly in the session's queued callbacks, never in the response). The cancellation waits
///   for the queue that reads the body, so a server sending faster than that queue keeps up can hold
///   the connection open until the body ends or the request times out (under ThreadSanitizer, 8 GiB
///   over loopback); `send` has thrown by then all the same. A `Content-Length` over
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
/// - A caller may cancel at any moment, from before the request is sent to after its response
///   arrived: the call ends once, with its response or `CancellationError`. On Linux this is why the
///   session keeps no `URLCache` (see ``init(configuration:)``).
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
    /// - Parameter configuration: The session's configuration; `.default` by default. On Apple
    ///   platforms its `URLCache` applies (pass `.ephemeral` to keep no HTTP cache or cookies on disk);
    ///   on Linux the session has no `URLCache`, since cancelling a request while `FoundationNetworking`
    ///   looks it up in one can trap. The configuration object itself is not changed.
    public init(configuration: URLSessionConfiguration = .default) {
        transfers = URLSessionTransferDelegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(
            configuration: Self.safeConfiguration(configuration), delegate: transfers, delegateQueue: queue)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// The longest `timeoutInterval` passed on as it is on Linux: a day.
    private static let longestTimeout: Double = 86_400

    /// `seconds` as a timeout that `URLSession` keeps: on Linux, rounded up to whole seconds, and a day
    /// at most; elsewhere unchanged.
    ///
    /// `FoundationNetworking` converts the timeout to whole seconds by rounding down, so 0.5 s timed out
    /// at once and 1.5 s after 1 s, and it traps on a timeout that is infinite, NaN or above about 10^16
    /// seconds. Rounding up keeps a request alive at least as long as asked; infinite, NaN and huge
    /// timeouts become a day, as in the AsyncHTTPClient transport of `Docs/Loaders.md`.
    static func timeoutThisSessionKeeps(_ seconds: Double) -> Double {
        #if canImport(FoundationNetworking)
            guard seconds.isFinite, seconds < longestTimeout else { return longestTimeout }
            return seconds > 0 ? seconds.rounded(.up) : seconds
        #else
            return seconds
        #endif
    }

    /// `configuration`, or on Linux a copy of it without a `URLCache` and with its timeouts made ones
    /// that `FoundationNetworking` keeps (see ``timeoutThisSessionKeeps(_:)``).
    ///
    /// `FoundationNetworking` looks a data task up in the session's `URLCache` on a queue of its own
    /// before the task's protocol exists. A cancel landing in that window is delivered after the task
    /// may have completed and left the session's registry, and the process traps ("Trying to access a
    /// behaviour for a task that in not in the registry"): 3 runs in 3 of the transport's cancellation
    /// stress test with the cache, none in 10 runs (48,000 calls) without it. A caller cancelling at
    /// the wrong moment must not end the process, so the cache goes. The store caches the decoded
    /// values instead.
    private static func safeConfiguration(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        #if canImport(FoundationNetworking)
            // `copy()` of a `URLSessionConfiguration` is a `URLSessionConfiguration` (NSCopying); the
            // fallback is never taken. The caller's object is left as it was.
            let copy = configuration.copy() as? URLSessionConfiguration ?? .ephemeral
            copy.urlCache = nil
            copy.timeoutIntervalForRequest = timeoutThisSessionKeeps(copy.timeoutIntervalForRequest)
            return copy
        #else
            return configuration
        #endif
    }

    /// Sends `request` and reads at most `maxBodySize` body bytes.
    ///
    /// - Parameters:
    ///   - request: The request; its `timeoutInterval` bounds how long the request may go without
    ///     progress. On Linux a fraction of a second is rounded up (`FoundationNetworking` keeps whole
    ///     seconds only), and an infinite, NaN or longer timeout than a day is a day (it traps on them).
    ///   - maxBodySize: The most body bytes to read.
    /// - Returns: The response.
    /// - Throws: ``NetworkLoaderError/bodyTooLarge(limit:)``, ``NetworkLoaderError/timedOut``,
    ///   ``NetworkLoaderError/connectionRefused``, ``NetworkLoaderError/transportFailed(underlying:)``;
    ///   `CancellationError` when the calling task is cancelled (the request is cancelled too).
    public func send(_ request: URLRequest, maxBodySize: Int) async throws -> HTTPResponse {
        try Task.checkCancellation()
        var request = request
        let timeout = Self.timeoutThisSessionKeeps(request.timeoutInterval)
        // Assigned only when it changes: an assignment marks the timeout as the request's own, and
        // `URLSession` then ignores the configuration's `timeoutIntervalForRequest`. NaN never equals.
        if !(timeout == request.timeoutInterval) { request.timeoutInterval = timeout }
        let task = session.dataTask(with: request)
        let transfer = URLSessionTransfer(limit: max(0, maxBodySize), method: request.httpMethod)
        transfers.register(transfer, for: task)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.start(continuation) { task.resume() }
            }
        } onCancel: {
            // On Linux `cancel()` waits for the session's work queue: not on the cancelling thread.
            #if canImport(FoundationNetworking)
                transfers.cancel(task)
            #else
                task.cancel()
            #endif
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
