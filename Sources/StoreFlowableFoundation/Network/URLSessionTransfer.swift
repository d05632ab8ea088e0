import Foundation
import StoreFlowable

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request of a ``URLSessionTransport`` in progress: the response and the body so far, the limit,
/// and the continuation of the `send` call waiting for it.
///
/// The session's delegate queue calls it, one callback at a time; `send` sets the continuation before
/// the request starts. A request cancelled before that (a caller cancelled between its cancellation
/// check and the start) may complete before the continuation is set: the outcome is kept then, and
/// `start` resumes with it at once instead of waiting for a completion that already happened. The
/// state is under a lock, and the continuation is resumed after the lock is released.
final class URLSessionTransfer: Sendable {
    /// What the transfer has received so far.
    private struct State {
        var continuation: CheckedContinuation<Result<HTTPResponse, NetworkLoaderError>, Never>?
        var response: HTTPURLResponse?
        var body = Data()
        var isOverLimit = false
        /// The outcome, when the request completed before `start` set the continuation.
        var earlyOutcome: Result<HTTPResponse, NetworkLoaderError>?
    }

    /// The most body bytes to read.
    let limit: Int
    private let state = LockedValue(State())

    /// Creates a transfer that reads at most `limit` body bytes.
    init(limit: Int) {
        self.limit = limit
    }

    /// Records the continuation to resume with the outcome, then starts the request with `resume`; or,
    /// when the request already completed (it was cancelled before it started), resumes the
    /// continuation with that outcome without starting anything.
    func start(
        _ continuation: CheckedContinuation<Result<HTTPResponse, NetworkLoaderError>, Never>, resume: () -> Void
    ) {
        let earlyOutcome = state.withLock { state in
            if state.earlyOutcome == nil { state.continuation = continuation }
            return state.earlyOutcome
        }
        if let earlyOutcome {
            continuation.resume(returning: earlyOutcome)
        } else {
            resume()
        }
    }

    /// The response arrived. Returns whether to go on: not when `Content-Length` is over the limit.
    func received(_ response: URLResponse) -> Bool {
        let http = response as? HTTPURLResponse
        let overLimit = response.expectedContentLength > Int64(limit)
        state.withLock { state in
            state.response = http
            if overLimit { state.isOverLimit = true }
        }
        return !overLimit
    }

    /// Body bytes arrived. Returns whether to go on: not once the body is over the limit (what was read
    /// is dropped then).
    func received(_ data: Data) -> Bool {
        state.withLock { state in
            guard !state.isOverLimit else { return false }
            if state.body.count + data.count > limit {
                state.isOverLimit = true
                state.body = Data()
                return false
            }
            state.body.append(data)
            return true
        }
    }

    /// The request ended, with `error` or not: resumes `send` with the outcome, or keeps the outcome for
    /// `start` when `send` has not set its continuation yet.
    func completed(with error: (any Error)?) {
        let (continuation, result) = state.withLock { state in
            let result = outcome(of: state, error: error)
            defer { state.continuation = nil }
            if state.continuation == nil { state.earlyOutcome = result }
            return (state.continuation, result)
        }
        continuation?.resume(returning: result)
    }

    private func outcome(of state: State, error: (any Error)?) -> Result<HTTPResponse, NetworkLoaderError> {
        if state.isOverLimit { return .failure(.bodyTooLarge(limit: limit)) }
        if let error { return .failure(Self.loaderError(for: error)) }
        guard let response = state.response else {
            return .failure(.transportFailed(underlying: URLError(.badServerResponse)))
        }
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            headers["\(name)"] = "\(value)"
        }
        return .success(HTTPResponse(statusCode: response.statusCode, headers: headers, body: state.body))
    }

    /// The loader's error for a failure of `URLSession`.
    static func loaderError(for error: any Error) -> NetworkLoaderError {
        guard let code = (error as? URLError)?.code else { return .transportFailed(underlying: error) }
        switch code {
        case .timedOut: return .timedOut
        case .cannotConnectToHost: return .connectionRefused
        default: return .transportFailed(underlying: error)
        }
    }
}
