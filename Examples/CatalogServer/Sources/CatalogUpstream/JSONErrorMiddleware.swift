import CatalogModel
public import Hummingbird

/// Answers every error a route throws, or the router's own (no such route, a body too large), with its
/// status and `{"error": "..."}`, so that a client of the upstream always gets JSON.
///
/// ``UpstreamRequestError`` keeps its status (a request its client abandoned, a 499, is logged at `debug`
/// only); Hummingbird's `HTTPError` keeps its status and message;
/// anything else becomes a 500 (the upstream's routes throw nothing else).
public struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Makes the middleware.
    public init() {}

    /// Calls the next responder, and turns what it throws into an ``UpstreamRequestError``.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - context: The request's context.
    ///   - next: The rest of the chain.
    /// - Returns: The answer of `next`, or the error answer.
    /// - Throws: ``UpstreamRequestError``, which the router turns into the answer.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as UpstreamRequestError where error.status == UpstreamRequestError.clientClosedRequest {
            // The client's doing, not a failure here; nobody reads the answer.
            context.logger.debug(
                "request abandoned by the client",
                metadata: ["method": "\(request.method)", "path": "\(request.uri.path)", "reason": "\(error.message)"])
            throw error
        } catch let error as UpstreamRequestError {
            throw error
        } catch let error as HTTPError {
            throw UpstreamRequestError(status: error.status, message: error.body ?? error.status.reasonPhrase)
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(error)"])
            throw UpstreamRequestError(status: .internalServerError, message: "internal error: \(error)")
        }
    }
}
