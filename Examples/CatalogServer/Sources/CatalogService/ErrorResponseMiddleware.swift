import CatalogModel
import Hummingbird
import Logging

/// Makes every failed request a JSON answer `{"error": "..."}` with the right status, so that a client
/// never receives an empty or HTML error body:
/// - a ``CatalogError`` answers its own status and message; a request its client abandoned
///   (``CatalogError/clientAborted(_:)``) is logged at `debug` only, as the client's doing;
/// - Hummingbird's errors keep their status (an unknown route is ``CatalogError/routeNotFound(_:)``, a
///   body over the limit 413, a method the route does not take 405, …);
/// - anything else is logged and answered as 500 ``CatalogError/internalFailure(_:)``, without its
///   details (they may hold what a client should not see).
///
/// `CancellationError` passes through: the request was abandoned, and nobody reads an answer.
struct ErrorResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Where unexpected failures are logged.
    let logger: Logger

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch CatalogError.clientAborted(let reason) {
            // The client left mid-request: nobody reads the answer, and nothing failed here. Its 499 is
            // for the request counts (RequestMetricsMiddleware), apart from the server's 5xx.
            logger.debug(
                "request abandoned by the client",
                metadata: ["method": "\(request.method)", "path": "\(request.uri.path)", "reason": "\(reason)"])
            return try CatalogError.clientAborted(reason).response(from: request, context: context)
        } catch let error as CatalogError {
            // A client sees what failed; the log keeps why (an internal host, a statement, a file). The
            // upstream's failures are logged by the stores' events already (a warning per failed fetch):
            // here only at debug, so that an outage under load does not write a line per request.
            let level: Logger.Level? =
                switch error {
                case .upstreamUnavailable: .debug
                case .upstreamMalformed, .cacheUnavailable: .warning
                case .internalFailure: .error
                default: nil
                }
            if let level {
                logger.log(
                    level: level, "request failed",
                    metadata: [
                        "method": "\(request.method)", "path": "\(request.uri.path)", "error": "\(error.detail)",
                    ])
            }
            return try error.response(from: request, context: context)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as HTTPError where error.status == .notFound {
            // The routes throw CatalogError for what they do not find: Hummingbird's 404 is the router's.
            return try CatalogError.routeNotFound("\(request.method) \(request.uri.path)")
                .response(from: request, context: context)
        } catch let error as any HTTPResponseError {
            let message = (error as? HTTPError)?.body ?? error.status.reasonPhrase.lowercased()
            return try JSONResponseBody.response(ErrorBody(error: message), status: error.status)
        } catch {
            logger.error(
                "request failed unexpectedly",
                metadata: ["method": "\(request.method)", "path": "\(request.uri.path)", "error": "\(error)"])
            return try CatalogError.internalFailure("the request failed unexpectedly")
                .response(from: request, context: context)
        }
    }
}
