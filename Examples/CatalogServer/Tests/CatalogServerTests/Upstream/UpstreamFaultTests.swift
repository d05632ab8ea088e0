import CatalogModel
import CatalogUpstream
import Testing

/// The upstream's injected faults: the outage switch, the error rate and the latency, changed over
/// `PUT /control`.
@Suite("Upstream: faults")
struct UpstreamFaultTests {
    /// One request of each product kind, as (method, path, body).
    static let productRequests: [(String, String, String?)] = [
        ("GET", "/products/1", nil),
        ("GET", "/products?ids=1,2", nil),
        ("GET", "/products?cursor=0", nil),
        ("PUT", "/products/1", #"{"id":1,"name":"n","priceCents":1,"description":"d","version":1}"#),
    ]

    @Test(.timeLimit(.minutes(1)))
    func anOutageFailsEveryProductRequestWithA503AndJSONUntilItEnds() async throws {
        try await UpstreamTestServer.run { server in
            let on = try await server.call("PUT", "/control", json: UpstreamControlUpdate(outage: true))
            #expect(on.status == 200)
            #expect(try on.decode(UpstreamControl.self) == UpstreamControl(latencyMilliseconds: 0, outage: true))
            for (method, path, body) in Self.productRequests {
                let answer = try await server.call(method, path, body: body)
                #expect(answer.status == 503, "\(method) \(path)")
                #expect(answer.contentType == "application/json")
                #expect(try answer.decode(ErrorBody.self).error.contains("outage"))
            }
            #expect(try await server.call("/control").status == 200)
            #expect(try await server.call("/stats").status == 200)

            _ = try await server.call("PUT", "/control", json: UpstreamControlUpdate(outage: false))
            // Served again, and the write refused during the outage stored nothing.
            #expect(try await server.call("/products/1").decode(Product.self) == .generated(id: 1))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anErrorRateOfOneFailsEveryProductRequest() async throws {
        try await UpstreamTestServer.run { server in
            _ = try await server.call("PUT", "/control", json: UpstreamControlUpdate(errorRate: 1))
            for (method, path, body) in Self.productRequests {
                let answer = try await server.call(method, path, body: body)
                #expect(answer.status == 503, "\(method) \(path)")
                #expect(try answer.decode(ErrorBody.self).error.contains("error rate"))
            }
            #expect(await server.upstream.state.stats.idsServed == 0)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aControlUpdateChangesOnlyTheFieldsItNames() async throws {
        try await UpstreamTestServer.run(control: UpstreamControl(latencyMilliseconds: 0, errorRate: 0.25)) { server in
            #expect(
                try await server.call("/control").decode(UpstreamControl.self)
                    == UpstreamControl(latencyMilliseconds: 0, errorRate: 0.25, outage: false))
            let changed = try await server.call("PUT", "/control", body: #"{"latencyMilliseconds": 5}"#)
            let expected = UpstreamControl(latencyMilliseconds: 5, errorRate: 0.25, outage: false)
            #expect(try changed.decode(UpstreamControl.self) == expected)
            #expect(try await server.call("/control").decode(UpstreamControl.self) == expected)
            #expect(try await server.call("PUT", "/control", body: "{}").decode(UpstreamControl.self) == expected)
        }
    }

    @Test(
        .timeLimit(.minutes(1)),
        arguments: [#"{"errorRate": 1.5}"#, #"{"errorRate": -0.1}"#, #"{"latencyMilliseconds": -1}"#])
    func anImpossibleControlIsRefusedAndTheFaultsStay(body: String) async throws {
        try await UpstreamTestServer.run { server in
            let answer = try await server.call("PUT", "/control", body: body)
            #expect(answer.status == 400)
            #expect(try answer.decode(ErrorBody.self).error.contains("errorRate"))
            #expect(
                try await server.call("/control").decode(UpstreamControl.self)
                    == UpstreamControl(latencyMilliseconds: 0))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func theLatencyIsWaitedOnTheClockByProductRequestsOnly() async throws {
        let clock = RecordingClock()
        let slow = UpstreamControl(latencyMilliseconds: 250)
        // `throws` spelled out: the closure's only `try`s are inside `#expect`, which the inference misses.
        try await UpstreamTestServer.run(control: slow, clock: clock) { server throws in
            for (method, path, body) in Self.productRequests {
                #expect(try await server.call(method, path, body: body).status == 200, "\(method) \(path)")
            }
            #expect(try await server.call("/control").status == 200)
            #expect(try await server.call("/stats").status == 200)
            #expect(try await server.call("POST", "/stats/reset").status == 200)
            // A request refused for its input answers at once.
            #expect(try await server.call("/products/abc").status == 400)
        }
        #expect(await clock.record.waits == Array(repeating: .milliseconds(250), count: 4))
    }
}
