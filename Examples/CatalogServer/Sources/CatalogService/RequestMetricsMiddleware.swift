import Hummingbird

/// Counts every answer of the service in ``CatalogMetrics``, by route pattern, method and status, with
/// its duration.
///
/// An answer whose length is known is counted when the handler returns it; a streamed one (`/events`)
/// when its body has been written, so that its duration is the stream's life. Put it first, so that it
/// sees the statuses ``ErrorResponseMiddleware`` gives failures.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Where answers are counted.
    let metrics: CatalogMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let method = request.method.rawValue
        do {
            var response = try await next(request, context)
            let route = context.endpointPath ?? "unmatched"
            let status = Int(response.status.code)
            if response.body.contentLength != nil {
                metrics.recordRequest(route: route, method: method, status: status, duration: start.duration(to: .now))
                return response
            }
            let body = response.body
            let metrics = metrics
            response.body = ResponseBody { writer in
                defer {
                    metrics.recordRequest(
                        route: route, method: method, status: status, duration: start.duration(to: .now))
                }
                try await body.write(writer)
            }
            return response
        } catch {
            let status = (error as? any HTTPResponseError).map { Int($0.status.code) } ?? 500
            metrics.recordRequest(
                route: context.endpointPath ?? "unmatched", method: method, status: status,
                duration: start.duration(to: .now))
            throw error
        }
    }
}
