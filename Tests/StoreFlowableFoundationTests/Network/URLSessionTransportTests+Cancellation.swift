import Foundation
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionTransport` under cancellation at every moment, against ``LoopbackHTTPServer``: every
/// call ends (a lost continuation hangs the test), none ends twice (a double resume traps), and the
/// session survives (on Linux a cancel landing after a task completed used to trap inside
/// `FoundationNetworking`).
///
/// Part of the serialized ``URLSessionTransportTests`` suite: run beside the other transport tests, its
/// thousands of requests slowed their cancellations past their bounds under ThreadSanitizer.
extension URLSessionTransportTests {
    /// Fewer under ThreadSanitizer, whose slowdown would keep the test's callers and the session's
    /// queues busy for minutes on two cores.
    private static let rounds = isRunningUnderThreadSanitizer ? 30 : 150
    private static let callersPerRound = 8

    @Test(.timeLimit(.minutes(2)), arguments: [URLSessionConfiguration.default, .ephemeral])
    func cancellingCallersAtEveryMomentOfAFastResponseEndsEveryCall(
        configuration: URLSessionConfiguration
    ) async throws {
        let body = Array("abc".utf8)
        let head = LoopbackHTTPServer.head(status: 200, [("Content-Length", "3")])
        let server = try LoopbackHTTPServer(
            reply: .complete(head: head, body: body), maxConnections: Self.rounds * Self.callersPerRound + 1,
            lifetime: 110)
        let transport = URLSessionTransport(configuration: configuration)
        var request = URLRequest(url: testURL("http://127.0.0.1:\(server.port)/small"))
        request.timeoutInterval = 20
        var (completed, cancelled) = (0, 0)
        for round in 0..<Self.rounds {
            let callers = (0..<Self.callersPerRound).map { [request] _ in
                Task { try await transport.send(request, maxBodySize: 100) }
            }
            // Cancel a little later each round: before sending, while connecting, as the response
            // arrives, right after it completed.
            for _ in 0..<(round % 50) { await Task.yield() }
            for caller in callers { caller.cancel() }
            for caller in callers {
                do {
                    let response = try await caller.value
                    #expect(response.body == Data(body))
                    completed += 1
                } catch is CancellationError {
                    cancelled += 1
                } catch {
                    Issue.record("a call ended with \(error), not its response or CancellationError")
                }
            }
        }
        #expect(completed + cancelled == Self.rounds * Self.callersPerRound)
        // The transport still works.
        let last = try await transport.send(request, maxBodySize: 100)
        #expect(last.body == Data(body))
    }
}
