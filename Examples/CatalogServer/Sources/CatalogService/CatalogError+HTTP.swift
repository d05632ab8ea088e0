import CatalogModel
public import Hummingbird

extension CatalogError: HTTPResponseError {
    /// The HTTP status of the answer: 400 for bad input, 404 for what does not exist, 502 for a
    /// malformed upstream answer, 503 when the upstream or the cache is unavailable, 500 for an
    /// unexpected failure.
    public var status: HTTPResponse.Status {
        switch self {
        case .invalidProductID, .invalidCursor, .invalidProduct: .badRequest
        case .productNotFound, .routeNotFound: .notFound
        case .upstreamMalformed: .badGateway
        case .upstreamUnavailable, .cacheUnavailable: .serviceUnavailable
        case .internalFailure: .internalServerError
        }
    }

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
