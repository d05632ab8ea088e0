import CatalogModel
import CatalogUpstream
import Foundation
import Logging
import Testing

/// A client that leaves in the middle of its request's body: not the upstream's failure.
@Suite("Upstream: aborted requests")
struct UpstreamAbortedRequestTests {
    /// A `PUT` route and a body it accepts.
    struct Put: Sendable, CustomTestStringConvertible {
        let path: String
        let body: String

        var testDescription: String { "PUT \(path)" }
    }

    static let puts = [
        Put(path: "/products/2", body: #"{"id":2,"name":"n","priceCents":1,"description":"d","version":1}"#),
        Put(path: "/control", body: #"{"latencyMilliseconds": 0, "errorRate": 0.0, "outage": false}"#),
    ]

    @Test(.timeLimit(.minutes(1)), arguments: puts, ServiceAbortedRequestTests.Leaving.allCases)
    func aPutWhoseClientLeavesMidBodyIsNotLoggedAsAFailure(
        _ put: Put, _ leaving: ServiceAbortedRequestTests.Leaving
    ) async throws {
        let logs = LogEntries()
        try await UpstreamTestServer.run(logs: logs) { server in
            let connection = try RawConnection(port: URL(string: server.baseURL)?.port ?? 0)
            try connection.send(
                "PUT \(put.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(put.body.utf8.count)\r\n\r\n" + put.body.prefix(put.body.count / 2))
            switch leaving {
            case .closes: connection.close()
            case .resets: connection.reset()
            }

            try await waitUntil("the request's end is logged") {
                logs.all.contains { $0.message == "request abandoned by the client" || $0.level >= .warning }
            }
            let failures = logs.all.filter { $0.level >= .warning }
            #expect(failures.isEmpty, "\(failures)")
            // Not served: a product request is counted apart, as refused.
            let rejected = put.path.hasPrefix("/products") ? 1 : 0
            #expect(await server.upstream.state.stats == UpstreamStats(rejectedRequests: rejected))
            #expect(try await server.call("/products/2").decode(Product.self) == .generated(id: 2))
        }
    }
}
