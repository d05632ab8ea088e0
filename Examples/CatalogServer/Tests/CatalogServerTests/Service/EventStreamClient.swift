import AsyncHTTPClient
import CatalogModel
import CatalogService
import Foundation
import Hummingbird

/// A client of a product's `/events` stream: opens it, parses each server-sent event's `data:` line as a
/// ``ProductEvent``, and closes the connection when told to (or when its test ends).
final class EventStreamClient: Sendable {
    /// The stream ended, or failed to open, before the event a test waited for.
    struct StreamEnded: Error, CustomStringConvertible {
        /// What the test waited for.
        let what: String

        var description: String { "the event stream ended before \(what)" }
    }

    /// The events parsed so far, and the stream's end.
    private let events: AsyncThrowingStream<ProductEvent, any Error>
    /// The task reading the response; cancelling it closes the connection.
    private let reader: Task<Void, Never>
    /// The status and content type of the answer, once its head arrived.
    let head: AsyncStream<(status: Int, contentType: String?)>

    /// Opens `url` (a service's `/products/{id}/events`).
    ///
    /// - Parameter url: The stream's URL.
    init(url: String) {
        let (events, eventSink) = AsyncThrowingStream.makeStream(of: ProductEvent.self)
        let (head, headSink) = AsyncStream.makeStream(of: (status: Int, contentType: String?).self)
        self.events = events
        self.head = head
        reader = Task {
            defer { headSink.finish() }
            do {
                let response = try await ServiceClient.client.execute(HTTPClientRequest(url: url), timeout: .minutes(5))
                headSink.yield((Int(response.status.code), response.headers.first(name: "Content-Type")))
                headSink.finish()
                var pending = ""
                for try await chunk in response.body {
                    pending += String(buffer: chunk)
                    while let end = pending.range(of: "\n\n") {
                        let event = String(pending[..<end.lowerBound])
                        pending.removeSubrange(..<end.upperBound)
                        for line in event.split(separator: "\n") where line.hasPrefix("data: ") {
                            eventSink.yield(
                                try JSONDecoder().decode(ProductEvent.self, from: Data(line.dropFirst(6).utf8)))
                        }
                    }
                }
                eventSink.finish()
            } catch {
                eventSink.finish(throwing: error)
            }
        }
    }

    deinit {
        reader.cancel()
    }

    /// The answer's status and content type.
    ///
    /// - Returns: They, once the head arrived.
    /// - Throws: ``StreamEnded`` when the request failed before.
    func status() async throws -> (status: Int, contentType: String?) {
        var iterator = head.makeAsyncIterator()
        guard let head = await iterator.next() else { throw StreamEnded(what: "its head") }
        return head
    }

    /// Reads events until one satisfies `isWanted`, and returns it.
    ///
    /// - Parameters:
    ///   - what: What is waited for, for the failure's message.
    ///   - isWanted: Whether an event is the one.
    /// - Returns: The first event that is.
    /// - Throws: ``StreamEnded`` when the stream ends first; the reading error.
    func next(_ what: String, where isWanted: (ProductEvent) -> Bool = { _ in true }) async throws -> ProductEvent {
        for try await event in events where isWanted(event) { return event }
        throw StreamEnded(what: what)
    }

    /// Whether the stream ended (the service finished the answer) with no more event.
    ///
    /// - Returns: `true` when it ended cleanly, `false` when another event came first.
    /// - Throws: The reading error, when the connection failed instead.
    func ended() async throws -> Bool {
        for try await _ in events { return false }
        return true
    }

    /// Closes the connection, as a client that goes away does.
    func close() {
        reader.cancel()
    }
}
