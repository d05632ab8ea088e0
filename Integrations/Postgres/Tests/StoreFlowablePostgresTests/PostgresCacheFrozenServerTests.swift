import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import Testing

/// A statement that gets no answer: its backend stopped with `SIGSTOP` (``FrozenBackend``), its
/// connection open, as with a server or a network that stopped answering without closing anything.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheFrozenServerTests {
    @Test(.enabled(if: FrozenBackend.canSeeSockets, "needs /proc/net/tcp"))
    func aStatementThatTimedOutGivesUpItsConnection() async throws {
        // A pool of one connection, so that a connection kept by a statement that gave up leaves none.
        try await withPoolOfOne { client in
            // The second read's cache waits longer: a new connection may take more than 500 ms to open
            // on a busy machine.
            let patient = try await makeCache(client, timeout: .seconds(10))
            let cache = try await openWithShortTimeout(client, name: patient.name, timeout: .milliseconds(500))
            let connection = try await onlyConnection(client)
            let frozen = try FrozenBackend(connection.backend)
            defer { frozen.thaw() }

            // The read is sent to the stopped backend, and times out.
            do throws(PostgresCacheError) {
                _ = try await cache.entry(forKey: 1)
                Issue.record("a read on a stopped backend returned")
            } catch {
                guard case .timedOut = error else { throw error }
            }
            // The next read gets a new connection: the only one was closed, not left leased to the read
            // that gave up, for as long as the backend does not answer. It used to time out too.
            #expect(try await patient.entry(forKey: 1) == nil)
        }
    }
}
