import CatalogModel
import Hummingbird
import Logging
import ServiceLifecycle
import StoreFlowable

/// The answer of `GET /products/{id}/events`: the product store's `publish()` stream as server-sent
/// events, one `data:` line of ``ProductEvent`` JSON per state, until the client goes away or the
/// service shuts down.
///
/// How the stream ends, and what it leaves behind:
/// - **The client disconnects**: Hummingbird sees the connection's input close
///   (`consumeWithCancellationOnInboundClose`) and cancels the writing task; the task forwarding the
///   store's states is cancelled with it, which ends the store subscription. A client that vanished
///   without closing (a cut cable) is found by the next heartbeat's failed write.
/// - **The service shuts down gracefully**: the stream ends (the client sees the end of the response),
///   so that draining the requests in flight does not wait for clients that never leave.
/// - **A write fails**: the same as a disconnect.
///
/// Between states, a comment line (`: heartbeat`) every `heartbeat` keeps proxies from closing an idle
/// stream. States arriving faster than the client reads are conflated (the newest 16 are kept), as the
/// store's own streams conflate.
enum ProductEventStream {
    /// What the writing loop is handed: a state to send, or a heartbeat.
    private enum Signal: Sendable {
        case state(LoadingState<Product>)
        case heartbeat
    }

    /// The streaming answer for product `id`.
    ///
    /// - Parameters:
    ///   - request: The request; its connection's input tells when the client leaves.
    ///   - id: The product's id.
    ///   - catalog: The repository whose store is streamed.
    ///   - metrics: Where open streams are counted.
    ///   - heartbeat: How long an idle stream waits before it sends a comment line.
    ///   - logger: Where the stream's end is logged.
    /// - Returns: A `200` answer of type `text/event-stream` whose body streams the states.
    static func response(
        to request: Request, id: Int, catalog: any ProductCatalog, metrics: CatalogMetrics, heartbeat: Duration,
        logger: Logger
    ) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                metrics.eventStreamsChanged(by: 1)
                defer { metrics.eventStreamsChanged(by: -1) }
                do {
                    try await request.body.consumeWithCancellationOnInboundClose { _ in
                        try await stream(id: id, catalog: catalog, heartbeat: heartbeat, into: &writer)
                    }
                    try await writer.finish(nil)
                    logger.debug("event stream ended by the service", metadata: ["product": "\(id)"])
                } catch {
                    // The client left (its input closed, or a write failed): nothing to answer.
                    logger.debug("event stream ended by the client", metadata: ["product": "\(id)"])
                }
            })
    }

    /// Writes each state of product `id` to `writer` until the task is cancelled, a write fails or a
    /// graceful shutdown begins.
    ///
    /// - Parameters:
    ///   - id: The product's id.
    ///   - catalog: The repository.
    ///   - heartbeat: The idle interval between comment lines.
    ///   - writer: The response body.
    /// - Throws: What a write throws.
    private static func stream(
        id: Int, catalog: any ProductCatalog, heartbeat: Duration, into writer: inout any ResponseBodyWriter
    ) async throws {
        let (signals, sink) = AsyncStream.makeStream(of: Signal.self, bufferingPolicy: .bufferingNewest(16))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await state in catalog.states(ofProduct: id) { sink.yield(.state(state)) }
                sink.finish()
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    if !Task.isCancelled { sink.yield(.heartbeat) }
                }
            }
            // Ending the stream of signals ends the loop; leaving it (for any reason) cancels the
            // forwarding task, whose end releases the store's subscription.
            defer { group.cancelAll() }
            try await withGracefulShutdownHandler {
                for await signal in signals {
                    try await writer.write(ByteBuffer(string: try text(of: signal)))
                }
            } onGracefulShutdown: {
                sink.finish()
            }
        }
    }

    /// The text of one signal: `data: <json>` and a blank line, or a comment line.
    ///
    /// - Parameter signal: A state or a heartbeat.
    /// - Returns: The event's text.
    /// - Throws: What encoding the state throws.
    private static func text(of signal: Signal) throws -> String {
        switch signal {
        case .state(let state): "data: \(try JSONResponseBody.line(ProductEvent(state)))\n\n"
        case .heartbeat: ": heartbeat\n\n"
        }
    }
}
