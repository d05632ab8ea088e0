import CatalogModel
public import Hummingbird
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A request the upstream refuses or cannot serve, answered with its status and `{"error": "..."}`.
///
/// The routes throw it for bad input (400), an unknown product (404), a fault (503), a body the client
/// did not send whole (499, ``clientClosedRequest``); the
/// ``JSONErrorMiddleware`` turns every other error into one, so no error answer is anything but JSON.
public struct UpstreamRequestError: HTTPResponseError, Sendable, Equatable {
    /// The status of the answer.
    public var status: HTTPResponse.Status
    /// What went wrong, for the answer's body.
    public var message: String

    /// Makes an error answer.
    ///
    /// - Parameters:
    ///   - status: The status of the answer.
    ///   - message: What went wrong, for the answer's body.
    public init(status: HTTPResponse.Status, message: String) {
        self.status = status
        self.message = message
    }

    /// A 400: the request's path, query or body is not what the route accepts.
    ///
    /// - Parameter message: What is wrong with the request.
    /// - Returns: The error.
    public static func badRequest(_ message: String) -> UpstreamRequestError {
        UpstreamRequestError(status: .badRequest, message: message)
    }

    /// A 404: no product has the id.
    ///
    /// - Parameter id: The id asked for.
    /// - Returns: The error.
    public static func unknownProduct(_ id: Int) -> UpstreamRequestError {
        UpstreamRequestError(status: .notFound, message: "no product has the id \(id)")
    }

    /// A 503: the upstream's faults failed the request.
    ///
    /// - Parameter fault: The fault.
    /// - Returns: The error.
    public static func fault(_ fault: UpstreamFault) -> UpstreamRequestError {
        UpstreamRequestError(status: .serviceUnavailable, message: fault.message)
    }

    /// 499, "client closed request" (nginx's): the client closed or reset its connection before its
    /// request's body arrived whole. Nobody reads the answer; the status tells it from the upstream's own
    /// failures.
    public static let clientClosedRequest = HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")

    /// The error for a request whose body could not be read because of `error`, or `nil` when `error`
    /// is not about the connection or the body's framing.
    ///
    /// - The connection closed before the body was whole (NIO's HTTP parser ends the body with
    ///   `HTTPParserError.invalidEOFState`), or was reset or dropped (`IOError` `ECONNRESET`,
    ///   `ECONNABORTED`, `EPIPE`, `ETIMEDOUT`; `ChannelError` for a channel already closed): a
    ///   ``clientClosedRequest``, which ``JSONErrorMiddleware`` logs at `debug` only.
    /// - Any other `HTTPParserError`: the body is not valid HTTP, a 400.
    ///
    /// - Parameter error: What reading the body threw.
    public init?(readingBodyFailedWith error: any Error) {
        switch error {
        case HTTPParserError.invalidEOFState:
            self.init(status: Self.clientClosedRequest, message: "the client left before its body arrived: \(error)")
        case let error as HTTPParserError:
            self.init(status: .badRequest, message: "the body is not valid HTTP: \(error)")
        case let error as IOError where [ECONNRESET, ECONNABORTED, EPIPE, ETIMEDOUT].contains(error.errnoCode):
            self.init(status: Self.clientClosedRequest, message: "the client left before its body arrived: \(error)")
        case ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed, ChannelError.eof, ChannelError.inputClosed:
            self.init(status: Self.clientClosedRequest, message: "the client left before its body arrived: \(error)")
        default:
            return nil
        }
    }

    /// The answer: the status, and the message as an ``ErrorBody``.
    ///
    /// - Parameters:
    ///   - request: The request being answered.
    ///   - context: The request's context.
    /// - Returns: The answer.
    /// - Throws: Never in practice: encoding a string into JSON does not fail.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try JSONResponse.make(ErrorBody(error: message), status: status)
    }
}
