import CatalogModel
public import Hummingbird

/// A request the upstream refuses or cannot serve, answered with its status and `{"error": "..."}`.
///
/// The routes throw it for bad input (400), an unknown product (404), a fault (503); the
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
