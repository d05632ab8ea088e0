import CatalogModel
import CatalogUpstream
import Testing

/// Requests the upstream refuses: each gets a typed JSON error with its status, and the server goes on
/// serving.
@Suite("Upstream: bad input")
struct UpstreamBadInputTests {
    /// A request the upstream must refuse, and the status it must refuse it with.
    struct BadRequest: Sendable, CustomTestStringConvertible {
        let method: String
        let path: String
        let body: String?
        let status: Int

        init(_ path: String, method: String = "GET", body: String? = nil, status: Int = 400) {
            self.method = method
            self.path = path
            self.body = body
            self.status = status
        }

        var testDescription: String { "\(method) \(path) \(body.map { String($0.prefix(40)) } ?? "")" }
    }

    static let product = #"{"id":1,"name":"n","priceCents":1,"description":"d","version":1}"#

    static let badRequests: [BadRequest] = [
        BadRequest("/products/abc"),
        BadRequest("/products/1.5"),
        BadRequest("/products/99999999999999999999999"),
        BadRequest("/products?ids=1,x"),
        BadRequest("/products?ids="),
        BadRequest("/products?ids=1,,2"),
        BadRequest("/products?cursor=x"),
        BadRequest("/products?cursor=-1"),
        BadRequest("/products?limit=0"),
        BadRequest("/products?limit=101"),
        BadRequest("/products?ids=1&cursor=0"),
        BadRequest("/products/abc", method: "PUT", body: product),
        BadRequest("/products/1", method: "PUT", body: "not json"),
        BadRequest("/products/1", method: "PUT", body: #"{"id":1}"#),
        BadRequest(
            "/products/1", method: "PUT", body: #"{"id":1,"name":7,"priceCents":1,"description":"d","version":1}"#),
        BadRequest("/products/2", method: "PUT", body: product),
        BadRequest("/products/1", method: "PUT"),
        BadRequest("/control", method: "PUT", body: "[1, 2]"),
        BadRequest("/control", method: "PUT", body: #"{"errorRate": "high"}"#),
        BadRequest(
            "/products/1", method: "PUT", body: String(repeating: " ", count: 100 * 1024) + product, status: 413),
        BadRequest("/nowhere", status: 404),
        BadRequest("/products/1", method: "DELETE", status: 404),
    ]

    @Test(.timeLimit(.minutes(1)), arguments: badRequests)
    func isRefusedWithATypedJSONErrorAndTheServerGoesOn(_ bad: BadRequest) async throws {
        try await UpstreamTestServer.run { server in
            let answer = try await server.call(bad.method, bad.path, body: bad.body)
            #expect(answer.status == bad.status)
            #expect(answer.contentType == "application/json")
            #expect(try !answer.decode(ErrorBody.self).error.isEmpty)
            // Not a request served: the stats' requests per answer stay those of the requests served. A
            // product request is counted apart; other paths not at all.
            let rejected = bad.path.hasPrefix("/products") && bad.status != 404 ? 1 : 0
            #expect(await server.upstream.state.stats == UpstreamStats(rejectedRequests: rejected))
            #expect(try await server.call("/products/1").decode(Product.self) == .generated(id: 1))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func namesTheFieldThatIsWrong() async throws {
        try await UpstreamTestServer.run { server in
            let missing = try await server.call("PUT", "/products/1", body: #"{"id":1}"#)
            #expect(try missing.decode(ErrorBody.self).error == "the body is not a product in JSON: name is missing")
            let mistyped = try await server.call("PUT", "/control", body: #"{"errorRate": "high"}"#)
            #expect(
                try mistyped.decode(ErrorBody.self).error
                    == "the body is not a control update in JSON: errorRate is not Double")
            let id = try await server.call("/products/abc")
            #expect(try id.decode(ErrorBody.self).error == "the product id must be an integer, not 'abc'")
        }
    }
}
