import Foundation
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionTransport` on its own, without a server: a refused connection and a caller cancelled
/// before sending. (The loopback package tests it against a real HTTP server.)
@Suite("URLSessionTransport", .timeLimit(.minutes(1)))
struct URLSessionTransportTests {
    @Test func aPortNobodyListensOnIsARefusedConnection() async throws {
        // Bound but not listening: the kernel refuses connections to the port.
        let socket = try RefusingLoopbackPort()
        let transport = URLSessionTransport()
        var request = URLRequest(url: testURL("http://127.0.0.1:\(socket.port)/users/1"))
        request.timeoutInterval = 10
        await #expect {
            _ = try await transport.send(request, maxBodySize: 1_000)
        } throws: { error in
            guard case NetworkLoaderError.connectionRefused = error else { return false }
            return true
        }
    }

    @Test func aCallerCancelledBeforeSendingSendsNothing() async throws {
        let socket = try RefusingLoopbackPort()
        let transport = URLSessionTransport()
        let request = URLRequest(url: testURL("http://127.0.0.1:\(socket.port)/"))
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(request, maxBodySize: 1_000)
        }
        await #expect(throws: CancellationError.self) { try await caller.value }
    }
}
