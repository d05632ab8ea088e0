import CatalogModel
import StoreFlowable
import StoreFlowableTesting
import Testing

@testable import CatalogService

/// The forwarding loop of `GET /products/{id}/events`, without HTTP: a writer the test holds, a
/// heartbeat on a clock the test moves.
@Suite("Product event stream: states and heartbeats")
struct ProductEventStreamTests {
    /// A writer that records what it is given and holds its first write until the test lets it go.
    private final class HeldWriter: Sendable {
        private let gate = AsyncStream<Void>.makeStream()
        private let written = AsyncStream<String>.makeStream()

        /// Everything written, in order, as it is written.
        var texts: AsyncStream<String> { written.stream }

        func write(_ text: String, holding: Bool) async {
            written.continuation.yield(text)
            if holding {
                var release = gate.stream.makeAsyncIterator()
                _ = await release.next()
            }
        }

        func release() { gate.continuation.yield() }

        func finish() { written.continuation.finish() }
    }

    @Test(.timeLimit(.minutes(1)))
    func heartbeatsNeverPushTheNewestStateOutWhileTheWriterIsBlocked() async throws {
        let clock = ManualClock()
        let writer = HeldWriter()
        let (states, store) = AsyncStream.makeStream(of: LoadingState<Product>.self)
        let forwarding = Task {
            var first = true
            try await ProductEventStream.forward(states: states, heartbeat: .seconds(15), clock: clock) { text in
                let holding = first
                first = false
                await writer.write(text, holding: holding)
            }
        }
        var written = writer.texts.makeAsyncIterator()
        // The first state is being written, and the writer is stuck on it (a slow client).
        store.yield(.completed(.generated(id: 1)))
        let firstText = await written.next()
        #expect(firstText?.contains("\"id\":1") == true)
        // A newer state waits, then 40 heartbeat periods pass while the writer is still stuck.
        var newer = Product.generated(id: 1)
        newer.name = "newest"
        store.yield(.completed(newer))
        for _ in 0..<40 {
            await clock.sleepers(atLeast: 1)
            clock.advance(by: .seconds(15))
        }
        await clock.sleepers(atLeast: 1)
        writer.release()
        store.finish()
        // The states end, so the loop writes what waits and returns.
        try await forwarding.value
        writer.finish()
        var rest: [String] = []
        while let text = await written.next() { rest.append(text) }
        // The newest state reached the client, after at most one heartbeat.
        #expect(rest.contains { $0.contains("newest") })
        #expect(rest.filter { $0.hasPrefix(": heartbeat") }.count <= 1)
    }
}
