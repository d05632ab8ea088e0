import CatalogModel
import CatalogService
import Foundation
import Logging
import Testing

/// A client that leaves in the middle of its request: the service's failure neither in its logs nor in
/// its 5xx counts.
@Suite("Service: aborted requests")
struct ServiceAbortedRequestTests {
    /// How a client leaves.
    enum Leaving: String, Sendable, CaseIterable {
        /// It closes its connection: a FIN.
        case closes
        /// It resets its connection: an RST.
        case resets
    }

    @Test(.timeLimit(.minutes(1)), arguments: Leaving.allCases)
    func aPutWhoseClientLeavesMidBodyIsLoggedAndCountedAsTheClientsAbort(_ leaving: Leaving) async throws {
        let logs = LogEntries()
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL, logs: logs) { service in
                let body = String(decoding: try JSONEncoder().encode(ServiceWriteTests.renamed), as: UTF8.self)
                let connection = try RawConnection(port: service.endpoint.port)
                try connection.send(
                    "PUT /products/5 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n" + body.prefix(body.count / 2))
                switch leaving {
                case .closes: connection.close()
                case .resets: connection.reset()
                }

                var counted: [String: Double] = [:]
                try await waitUntil("the aborted PUT is counted") {
                    counted = try await service.requestCounts(method: "PUT")
                    return !counted.isEmpty
                }
                // nginx's 499, "client closed request": counted, and not among the server's failures.
                #expect(counted == ["499": 1])
                let failures = logs.all.filter { $0.level >= .warning }
                #expect(failures.isEmpty, "\(failures)")
                let aborts = logs.all.filter { $0.message == "request abandoned by the client" }
                #expect(aborts.count == 1, "\(logs.all)")
                #expect(aborts.first?.level == .debug)
                #expect(aborts.first?.metadata["path"] == "/products/5")
                // Nothing was written.
                #expect(await upstream.upstream.state.stats.writeRequests == 0)
                #expect(try await service.product(5) == .generated(id: 5))
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aPutWhoseBodyIsNotValidHTTPIsTheClientsBadRequest() async throws {
        let logs = LogEntries()
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(upstream: upstream.baseURL, logs: logs) { service in
                let connection = try RawConnection(port: service.endpoint.port)
                defer { connection.close() }
                // A chunk size must be hexadecimal.
                try connection.send(
                    "PUT /products/5 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\nzz\r\n")

                var counted: [String: Double] = [:]
                try await waitUntil("the PUT is counted") {
                    counted = try await service.requestCounts(method: "PUT")
                    return !counted.isEmpty
                }
                #expect(counted == ["400": 1])
                let failures = logs.all.filter { $0.level >= .warning }
                #expect(failures.isEmpty, "\(failures)")
                #expect(await upstream.upstream.state.stats.writeRequests == 0)
            }
        }
    }
}

extension ServiceUnderTest {
    /// The service's counts of answers to `method` on `/products/{id}`, by status, from `/metrics`.
    ///
    /// - Parameter method: The method, such as `PUT`.
    /// - Returns: Each status counted, and its count.
    /// - Throws: Why the exchange failed.
    func requestCounts(method: String) async throws -> [String: Double] {
        let prefix = #"catalog_http_requests_total{route="/products/{id}",method=""# + method + #"",status=""#
        var counts: [String: Double] = [:]
        for line in try await get("/metrics").text.split(separator: "\n") where line.hasPrefix(prefix) {
            let rest = line.dropFirst(prefix.count)
            guard let quote = rest.firstIndex(of: "\""), let space = rest.lastIndex(of: " ") else { continue }
            counts[String(rest[..<quote])] = Double(rest[rest.index(after: space)...])
        }
        return counts
    }
}
