import CatalogModel
public import Hummingbird

extension CatalogError: HTTPResponseError {
    /// The HTTP status of the answer: 400 for bad input, 404 for what does not exist, 502 for a
    /// malformed upstream answer, 503 when the upstream or the cache is unavailable, 500 for an
    /// unexpected failure, and 499 (nginx's "client closed request") for a request its client abandoned.
    public var status: HTTPResponse.Status {
        switch self {
        case .invalidProductID, .invalidCursor, .invalidProduct: .badRequest
        case .productNotFound, .routeNotFound: .notFound
        case .upstreamMalformed: .badGateway
        case .upstreamUnavailable, .cacheUnavailable: .serviceUnavailable
        case .internalFailure: .internalServerError
        case .clientAborted: Self.clientClosedRequest
        }
    }

    /// 499, "client closed request": not a standard status, but the one nginx gave the case and the one
    /// log and metrics tools know it by.
    static let clientClosedRequest = HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")

    /// The answer: ``status`` with `{"error": "<description>"}`.
    ///
    /// - Parameters:
    ///   - request: The request that failed.
    ///   - context: Its context.
    /// - Returns: The JSON error answer.
    /// - Throws: Never in practice: encoding an ``ErrorBody`` cannot fail.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try JSONResponseBody.response(ErrorBody(error: description), status: status)
    }
}
