import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import StoreFlowableTesting
import Synchronization

/// A cache's change listener running in a task of its own, recording what it delivers.
///
/// Its backoff sleeps on a ``ManualClock`` (no jitter, 1 second doubling up to 8 seconds by default),
/// so a test decides when it reconnects.
final class TestListener<Key: Hashable & Sendable & Codable>: Sendable {
    /// The changes delivered, in order.
    let changes = Recorder<PostgresCacheChange<Key>>()
    /// The clock of the backoff.
    let clock = ManualClock()
    /// The listening task.
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    /// Starts `cache`'s listener.
    ///
    /// - Parameters:
    ///   - cache: The cache.
    ///   - retry: The backoff.
    ///   - onChange: Runs for each change after it is recorded (a slow handler, say).
    init<Value>(
        _ cache: PostgresCache<Key, Value>,
        retry: PostgresCacheListenerRetry = PostgresCacheListenerRetry(
            baseDelay: .seconds(1), maxDelay: .seconds(8), jitter: .none),
        onChange: @escaping @Sendable (PostgresCacheChange<Key>) async -> Void = { _ in }
    ) {
        let changes = changes
        let clock = clock
        task.withLock {
            $0 = Task {
                await cache.listenForChanges(retry: retry, clock: clock) { change in
                    changes.record(change)
                    await onChange(change)
                }
            }
        }
    }

    /// Waits until the listener has delivered `.all` `count` times: it listens.
    ///
    /// - Parameter count: How many `.all` to wait for.
    /// - Throws: When it does not happen within the bound.
    func waitUntilListening(_ count: Int = 1) async throws {
        try await changes.wait("listening (\(count) × .all)") { $0.filter { $0 == .all }.count >= count }
    }

    /// Cancels the listener and waits for it to return.
    ///
    /// - Returns: How long it took to return after the cancellation.
    @discardableResult
    func stop() async -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
        return clock.now - start
    }

    deinit {
        task.withLock { $0?.cancel() }
    }
}

/// The server process id of the connection that listens on `channel`, once there is one.
///
/// - Parameters:
///   - client: A running client (of the test, not the listener's).
///   - channel: The channel.
/// - Returns: The backend's pid.
/// - Throws: When no backend listens within 20 seconds.
func listeningBackend(_ client: PostgresClient, channel: String) async throws -> Int64 {
    let listen = "LISTEN \"\(channel)\";"
    var pid: Int64?
    try await waitUntil(client, "a backend listens on \(channel)") { client in
        pid = try await scalar(
            client, "SELECT pid FROM pg_stat_activity WHERE query = \(listen) AND pid <> pg_backend_pid()")
        return pid != nil
    }
    guard let pid else { throw Recorder<Int>.NotReached(description: "no listening backend") }
    return pid
}
