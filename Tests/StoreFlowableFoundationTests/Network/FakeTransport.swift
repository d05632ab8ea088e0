import Foundation
import StoreFlowable
import StoreFlowableFoundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that answers every request with what a closure returns, recording the requests; it can
/// also wait, cancellably, until the calling task is cancelled.
final class FakeTransport: HTTPTransport {
    /// What the transport does with a request.
    enum Answer: Sendable {
        case respond(HTTPResponse)
        case fail(any Error)
        /// Waits until the calling task is cancelled, then throws what a cancelled client throws.
        case hang(throwing: any Error)
    }

    private let answer: @Sendable (URLRequest) -> Answer
    private let requests = LockedValue([URLRequest]())

    init(_ answer: @escaping @Sendable (URLRequest) -> Answer) {
        self.answer = answer
    }

    /// The requests sent so far.
    var sent: [URLRequest] { requests.withLock { $0 } }

    func send(_ request: URLRequest, maxBodySize: Int) async throws -> HTTPResponse {
        requests.withLock { $0.append(request) }
        switch answer(request) {
        case .respond(let response): return response
        case .fail(let error): throw error
        case .hang(let error):
            let (stream, _) = AsyncStream<Void>.makeStream()
            for await _ in stream {}
            throw error
        }
    }
}

extension HTTPResponse {
    /// A response with `status` and a UTF-8 `body`.
    static func status(_ status: Int, _ body: String = "", headers: [String: String] = [:]) -> HTTPResponse {
        HTTPResponse(statusCode: status, headers: headers, body: Data(body.utf8))
    }
}
