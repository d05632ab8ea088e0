import Foundation
import StoreFlowable

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of a ``URLSessionTransport``'s session: hands each callback to the transfer of its
/// task, so that bodies are read as they arrive and cut off at their limit.
final class URLSessionTransferDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// The transfers in progress, by task identifier.
    private let transfers = LockedValue([Int: URLSessionTransfer]())

    /// Makes `transfer` receive the callbacks of `task`; call it before the task is resumed.
    func register(_ transfer: URLSessionTransfer, for task: URLSessionTask) {
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    private func transfer(of task: URLSessionTask) -> URLSessionTransfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let goOn = transfer(of: dataTask)?.received(response) ?? false
        completionHandler(goOn ? .allow : .cancel)
        // FoundationNetworking on Linux does not end the task on `.cancel`: it waits for the body until
        // the request's timeout. Cancelling the task ends it at once, on every platform.
        if !goOn { cancel(dataTask) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if transfer(of: dataTask)?.received(data) == true { cancel(dataTask) }
    }

    /// Where this transport's tasks are cancelled: a serial queue of its own. On Linux `cancel()` waits
    /// for the session's work queue, which is busy reading while a fast server sends (a second in the
    /// tests on a loaded machine). Neither the delegate queue (the transport's other requests use it)
    /// nor a thread of the cooperative pool may wait with it, nor the global queue: it runs only a few
    /// blocks at once, and the cancels of a burst of cancelled requests, each waiting there, held up
    /// another transport's cancel (CI saw a body past the bound read for 30 s after the stress test).
    private let cancellations = DispatchQueue(label: "StoreFlowable.URLSessionTransport.cancellations")

    /// Cancels `task` on the transport's cancellation queue.
    func cancel(_ task: URLSessionTask) {
        cancellations.async { task.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        transfer?.completed(with: error)
    }
}
