import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import Synchronization
import Testing

/// PostgreSQL restarted again and again (`pg_ctl stop -m fast`, then `start`, as `pg_ctl restart` does)
/// under a listener and a pool busy with concurrent reads and writes: after every restart the listener
/// listens again and delivers `.all`, a change committed after the restart reaches it, and no read or
/// write waits for the cache's timeout.
///
/// A restart closes every connection of the pool at once. postgres-nio 1.33's pool learns of each
/// close a moment after the connection's channel closed, and may lease the closed connection
/// meanwhile; a statement sent on it got no answer at all, so the operation waited for the cache's
/// whole timeout (seen in most rounds here before the statements checked their connection).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PostgresCacheRestartTests {
    @Test func afterEachRestartUnderLoadTheListenerHearsChangesAndNoStatementWaitsForTheTimeout() async throws {
        let server = try await TestPostgresServer.launch()
        // Far above how long a statement waits for the server to come back here (well under a second).
        let timeout = Duration.seconds(5)
        try await withClient(server, connectTimeout: .seconds(2)) { client in
            let name = uniqueName()
            let events = Recorder<PostgresCacheEvent>()
            let writer = try await makeCache(client, name: name, timeout: timeout)
            let reader = try await makeCache(client, name: name, timeout: timeout, events: events.record)
            let changes = Recorder<PostgresCacheChange<Int>>()
            let listening = Task {
                await reader.listenForChanges(
                    retry: PostgresCacheListenerRetry(baseDelay: .milliseconds(20), maxDelay: .milliseconds(200))
                ) { change in
                    changes.record(change)
                }
            }
            try await changes.wait("listening") { $0.contains(.all) }
            let load = Load(writer: writer, reader: reader, workers: 12)

            for round in 1...8 {
                let listenedBefore = changes.elements.filter { $0 == .all }.count
                try await server.stop(.fast)
                try await server.start()
                // (a) The listener listens again and delivers `.all`.
                try await changes.wait("round \(round): `.all` after the restart") { changes in
                    changes.filter { $0 == .all }.count > listenedBefore
                }
                // (b) A change committed after the restart reaches it. The write is retried: one sent at
                // the moment the server stopped may fail.
                let key = -round
                try await writeUntilAccepted(writer, key: key, round: round)
                try await changes.wait("round \(round): the change of key \(key)") { changes in
                    changes.contains { if case .key(key, _) = $0 { true } else { false } }
                }
            }

            // (c) Every read and write ended before the timeout: with success, or with an error.
            let outcomes = await load.stop()
            #expect(outcomes.count > 100, "the load ran: \(outcomes.count) operations")
            #expect(outcomes.contains { $0.error == nil })
            let waited = outcomes.filter { $0.duration >= timeout || $0.error?.isTimedOut == true }
            #expect(waited.isEmpty, "operations that waited for the \(timeout) timeout: \(waited)")
            listening.cancel()
            await listening.value
            #expect(!events.elements.contains { if case .malformedNotification = $0 { true } else { false } })
        }
        try await server.stop()
    }

    /// Writes `key` through `cache` until a write succeeds (one in flight when the server stopped may
    /// fail), at most 20 times.
    private func writeUntilAccepted(_ cache: PostgresCache<Int, String>, key: Int, round: Int) async throws {
        var failures: [PostgresCacheError] = []
        while failures.count < 20 {
            do throws(PostgresCacheError) {
                try await cache.setEntry(
                    CacheEntry(value: "round \(round)", storedAt: CacheTime(nanosecondsSince1970: 1)), forKey: key)
                return
            } catch {
                failures.append(error)
            }
        }
        Issue.record("round \(round): the write after the restart kept failing: \(failures)")
    }
}

/// Reads and writes through two caches from several tasks at once, each in a loop, recording how long
/// each operation took and how it ended, until stopped.
private final class Load: Sendable {
    /// One read or write.
    struct Outcome: Sendable, CustomStringConvertible {
        /// How long it took.
        var duration: Duration
        /// Its error, or `nil` for a success.
        var error: PostgresCacheError?

        var description: String { "\(duration): \(error.map(String.init(describing:)) ?? "ok")" }
    }

    private let running = Atomic<Bool>(true)
    private let outcomes = Mutex<[Outcome]>([])
    private let tasks: Mutex<[Task<Void, Never>]> = Mutex([])

    /// Starts `workers` tasks: even ones read, odd ones write, each its own key.
    init(writer: PostgresCache<Int, String>, reader: PostgresCache<Int, String>, workers: Int) {
        let started = (0..<workers).map { worker in
            Task { [self] in
                let clock = ContinuousClock()
                var count = 0
                while running.load(ordering: .relaxed) {
                    count += 1
                    let start = clock.now
                    var failure: PostgresCacheError?
                    do throws(PostgresCacheError) {
                        if worker % 2 == 0 {
                            _ = try await reader.entry(forKey: worker)
                        } else {
                            let entry = CacheEntry(value: "\(count)", storedAt: CacheTime(nanosecondsSince1970: 1))
                            try await writer.setEntry(entry, forKey: worker)
                        }
                    } catch {
                        failure = error
                    }
                    let outcome = Outcome(duration: clock.now - start, error: failure)
                    outcomes.withLock { $0.append(outcome) }
                }
            }
        }
        tasks.withLock { $0 = started }
    }

    /// Stops the workers and waits for them.
    ///
    /// - Returns: The outcome of every operation.
    func stop() async -> [Outcome] {
        running.store(false, ordering: .relaxed)
        for task in tasks.withLock({ $0 }) { await task.value }
        return outcomes.withLock { $0 }
    }
}

extension PostgresCacheError {
    /// Whether this is ``PostgresCacheError/timedOut(operation:after:)``.
    fileprivate var isTimedOut: Bool {
        if case .timedOut = self { true } else { false }
    }
}
