import Foundation
import StoreFlowable

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request of a ``URLSessionTransport`` in progress: the response and the body so far, the limit,
/// and the continuation of the `send` call waiting for it.
///
/// The session's delegate queue calls it, one callback at a time; `send` sets the continuation before
/// the request starts. The outcome is decided once: when the body passes the limit (the caller is
/// resumed then, without waiting for the task to end) or when the task completes. An outcome decided
/// before `send` set its continuation (a caller cancelled between its cancellation check and the start,
/// whose task completed at once) is kept, and `start` resumes with it instead of waiting for a
/// completion that already happened. The state is under a lock, and the continuation is resumed after
/// the lock is released.
final class URLSessionTransfer: Sendable {
    private typealias Outcome = Result<HTTPResponse, NetworkLoaderError>

    /// What the transfer has received so far.
    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        var response: HTTPURLResponse?
        var body = Data()
        var isOverLimit = false
        /// The outcome, once decided; `continuation` is resumed with it (now, or in `start`).
        var outcome: Outcome?

        /// Decides the outcome unless it is decided already; returns the continuation to resume with it.
        mutating func finish(with outcome: Outcome) -> CheckedContinuation<Outcome, Never>? {
            guard self.outcome == nil else { return nil }
            self.outcome = outcome
            defer { continuation = nil }
            return continuation
        }
    }

    /// The most body bytes to read.
    let limit: Int
    /// Whether the request is a `HEAD`, whose response has no body whatever its `Content-Length` says.
    private let isHead: Bool
    private let state = LockedValue(State())

    /// Creates a transfer that reads at most `limit` body bytes of the response to a request whose
    /// method is `method`.
    init(limit: Int, method: String?) {
        self.limit = limit
        isHead = method?.uppercased() == "HEAD"
    }

    /// Whether a response's `Content-Length` is the length of a body that will follow: not for a
    /// `HEAD` request, nor for a status that has no body (1xx, 204, 304), where it describes the
    /// resource (RFC 9110, 8.6).
    private func announcesBody(_ response: URLResponse) -> Bool {
        guard !isHead else { return false }
        guard let status = (response as? HTTPURLResponse)?.statusCode else { return true }
        return !(100..<200).contains(status) && status != 204 && status != 304
    }

    /// Records the continuation to resume with the outcome, then starts the request with `resume`; or,
    /// when the outcome is already decided (the request was cancelled before it started), resumes the
    /// continuation with it without starting anything.
    func start(
        _ continuation: CheckedContinuation<Result<HTTPResponse, NetworkLoaderError>, Never>, resume: () -> Void
    ) {
        let decided = state.withLock { state in
            if state.outcome == nil { state.continuation = continuation }
            return state.outcome
        }
        if let decided {
            continuation.resume(returning: decided)
        } else {
            resume()
        }
    }

    /// The response arrived. Returns whether to go on: not when `Content-Length` announces a body over
    /// the limit (the caller gets ``NetworkLoaderError/bodyTooLarge(limit:)`` now; cancel the task).
    func received(_ response: URLResponse) -> Bool {
        let http = response as? HTTPURLResponse
        let overLimit = response.expectedContentLength > Int64(limit) && announcesBody(response)
        let continuation = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            state.response = http
            guard overLimit else { return nil }
            state.isOverLimit = true
            return state.finish(with: .failure(.bodyTooLarge(limit: limit)))
        }
        continuation?.resume(returning: .failure(.bodyTooLarge(limit: limit)))
        return !overLimit
    }

    /// Body bytes arrived. Returns `true` when they took the body past the limit, once: cancel the task
    /// then. What was read is dropped, and so is any byte arriving later; the caller gets
    /// ``NetworkLoaderError/bodyTooLarge(limit:)`` now.
    func received(_ data: Data) -> Bool {
        let (passedLimit, continuation) = state.withLock { state -> (Bool, CheckedContinuation<Outcome, Never>?) in
            guard !state.isOverLimit else { return (false, nil) }
            guard state.body.count + data.count > limit else {
                state.body.append(data)
                return (false, nil)
            }
            state.isOverLimit = true
            state.body = Data()
            return (true, state.finish(with: .failure(.bodyTooLarge(limit: limit))))
        }
        continuation?.resume(returning: .failure(.bodyTooLarge(limit: limit)))
        return passedLimit
    }

    /// The request ended, with `error` or not: resumes `send` with the outcome, unless it was decided
    /// already.
    func completed(with error: (any Error)?) {
        let (continuation, result) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Outcome) in
            let result = outcome(of: state, error: error)
            return (state.finish(with: result), result)
        }
        continuation?.resume(returning: result)
    }

    private func outcome(of state: State, error: (any Error)?) -> Outcome {
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
