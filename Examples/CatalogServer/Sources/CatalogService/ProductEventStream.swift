import CatalogModel
import Hummingbird
import Logging
import NIOConcurrencyHelpers
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
///   without closing (a cut cable) leaves the next heartbeat unacknowledged: the kernel drops the
///   connection after ``CatalogConfiguration/deadPeerTimeout`` (``DeadPeerTimeoutChannel``), and the
///   stream ends as for a disconnect, within about a heartbeat and that timeout.
/// - **The service shuts down gracefully**: the stream ends (the client sees the end of the response),
///   so that draining the requests in flight does not wait for clients that never leave.
/// - **A write fails**: the same as a disconnect.
///
/// Between states, a comment line (`: heartbeat`) every `heartbeat` keeps proxies from closing an idle
/// stream. States arriving faster than the client reads are conflated (the newest 16 are kept), as the
/// store's own streams conflate.
enum ProductEventStream {
    /// What the writing loop is handed: a state to send, or a heartbeat.
    enum Signal: Sendable {
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

    /// Writes the states of product `id` and the heartbeats between them to `writer` until the store's
    /// stream ends, the service shuts down or a write fails.
    ///
    /// - Parameters:
    ///   - id: The product's id.
    ///   - catalog: The repository whose store is streamed.
    ///   - heartbeat: How long an idle stream waits before it sends a comment line.
    ///   - writer: The answer's body.
    /// - Throws: What a write throws (the client went away).
    private static func stream(
        id: Int, catalog: any ProductCatalog, heartbeat: Duration, into writer: inout any ResponseBodyWriter
    ) async throws {
        try await forward(states: catalog.states(ofProduct: id), heartbeat: heartbeat, clock: ContinuousClock()) {
            try await writer.write(ByteBuffer(string: $0))
        }
    }

    /// Writes each state of `states` and a heartbeat every `heartbeat` (on `clock`) with `write`, until
    /// `states` ends, the service shuts down or `write` throws.
    ///
    /// States and heartbeats wait for the writer in one buffer of the newest 16. At most one heartbeat is
    /// in it at a time (the next one is skipped while one waits), so a writer blocked by a slow client
    /// never has its newest state pushed out by heartbeats: the client always ends with the newest state.
    ///
    /// - Parameters:
    ///   - states: The store's states.
    ///   - heartbeat: How long between heartbeats.
    ///   - clock: The clock the heartbeats sleep on.
    ///   - write: Writes one event's text.
    /// - Throws: What `write` throws.
    static func forward(
        states: AsyncStream<LoadingState<Product>>, heartbeat: Duration, clock: any Clock<Duration>,
        write: (String) async throws -> Void
    ) async throws {
        let (signals, sink) = AsyncStream.makeStream(of: Signal.self, bufferingPolicy: .bufferingNewest(16))
        let heartbeatWaiting = NIOLockedValueBox(false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await state in states { sink.yield(.state(state)) }
                sink.finish()
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await clock.sleep(for: heartbeat)
                    if Task.isCancelled { break }
                    let send = heartbeatWaiting.withLockedValue { waiting in
                        defer { waiting = true }
                        return !waiting
                    }
                    if send { sink.yield(.heartbeat) }
                }
            }
            // Ending the stream of signals ends the loop; leaving it (for any reason) cancels the
            // forwarding task, whose end releases the store's subscription.
            defer { group.cancelAll() }
            try await withGracefulShutdownHandler {
                for await signal in signals {
                    if case .heartbeat = signal { heartbeatWaiting.withLockedValue { $0 = false } }
                    try await write(try text(of: signal))
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
