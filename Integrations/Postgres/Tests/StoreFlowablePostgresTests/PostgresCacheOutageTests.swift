import StoreFlowable
import StoreFlowablePostgres
import Testing

/// A server that stops makes reads and writes throw the typed error promptly (no crash, no hang); once
/// it is started again, the same cache object works again.
@Suite(.timeLimit(.minutes(3)))
struct PostgresCacheOutageTests {
    @Test func aStoppedServerGivesPromptTypedErrorsAndTheSameCacheWorksOnceItIsBack() async throws {
        // A server of this test's own: stopping the shared one would fail the other tests.
        let server = try await TestPostgresServer.launch()
        try await withClient(server, connectTimeout: .seconds(1)) { client in
            let cache = try await makeCache(client, timeout: .seconds(3))
            let time = CacheTime(nanosecondsSince1970: 1)
            try await cache.setEntry(CacheEntry(value: "before", storedAt: time), forKey: 1)
            #expect(try await cache.entry(forKey: 1)?.value == "before")

            try await server.stop()
            let clock = ContinuousClock()
            for attempt in 0..<2 {
                let start = clock.now
                await #expect {
                    _ = try await cache.entry(forKey: 1)
                } throws: { error in
                    Self.isOutage(error)
                }
                await #expect {
                    try await cache.setEntry(CacheEntry(value: "during", storedAt: time), forKey: 2)
                } throws: { error in
                    Self.isOutage(error)
                }
                // Two operations, each bounded by the 3-second timeout.
                #expect(clock.now - start < .seconds(8), "attempt \(attempt)")
            }

            try await server.start()
            // The pool reconnects on its own, after its back-off (a request waits in its queue meanwhile,
            // up to the cache timeout): retry until a write goes through.
            let deadline = clock.now + .seconds(60)
            var recovered = false
            while !recovered, clock.now < deadline {
                do throws(PostgresCacheError) {
                    try await cache.setEntry(CacheEntry(value: "after", storedAt: time), forKey: 3)
                    recovered = true
                } catch {
                    switch error {
                    case .timedOut, .databaseFailed(_, nil, _): await Task.yield()  // still unreachable
                    default: throw error  // a statement the server rejected: no outage, fail at once
                    }
                }
            }
            #expect(recovered)
            // What was committed before the stop is still there.
            #expect(try await cache.entry(forKey: 1)?.value == "before")
            #expect(try await cache.entry(forKey: 3)?.value == "after")
            try await cache.removeAllEntries()
            #expect(try await cache.entry(forKey: 3) == nil)
        }
        try await server.stop()
    }

    /// Whether `error` is the cache's error for an unreachable database.
    private static func isOutage(_ error: any Error) -> Bool {
        switch error as? PostgresCacheError {
        case .databaseFailed?, .timedOut?: true
        default: false
        }
    }
}
