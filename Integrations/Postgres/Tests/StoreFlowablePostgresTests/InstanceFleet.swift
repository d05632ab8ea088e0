import PostgresNIO
import Testing

/// Server instances in processes of their own (``InstanceProcess``), sharing one `PostgresCache` on a
/// PostgreSQL server of the test's own (so that a test may stop it, and `test_origin_calls` counts only
/// this test's origin calls).
///
/// The children are killed when the fleet goes away, and the server is stopped by its watchdog when the
/// test process ends; ``terminate()`` ends both gracefully at the end of a passing test.
final class InstanceFleet: Sendable {
    /// The server.
    let server: TestPostgresServer
    /// The cache name every instance uses.
    let cache: String
    /// The instances, in the order of their names.
    let instances: [InstanceProcess]

    private init(server: TestPostgresServer, cache: String, instances: [InstanceProcess]) {
        self.server = server
        self.cache = cache
        self.instances = instances
    }

    /// Starts a server and one instance per name, all at once (so that they migrate the cache
    /// concurrently), and waits until every instance is ready.
    ///
    /// - Parameters:
    ///   - names: The instances' names.
    ///   - delay: How long each origin call takes.
    ///   - timeout: Each instance's bound on a database operation.
    ///   - lease: Each instance's lease of its fetch claims.
    ///   - delays: Origin delays of particular instances, by name, instead of `delay`.
    /// - Returns: The fleet.
    /// - Throws: Why the server or an instance did not start.
    static func start(
        _ names: [String], delay: Duration = .zero, timeout: Duration = .seconds(2), lease: Duration = .seconds(10),
        delays: [String: Duration] = [:]
    ) async throws -> InstanceFleet {
        let server = try await TestPostgresServer.launch()
        let cache = uniqueName()
        let instances = try await withThrowingTaskGroup(of: (Int, InstanceProcess).self) { group in
            for (index, name) in names.enumerated() {
                group.addTask {
                    let instance = try await InstanceProcess.start(
                        name, server: server, cache: cache, delay: delays[name] ?? delay, timeout: timeout,
                        lease: lease)
                    return (index, instance)
                }
            }
            var started: [(Int, InstanceProcess)] = []
            for try await instance in group { started.append(instance) }
            return started.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return InstanceFleet(server: server, cache: cache, instances: instances)
    }

    /// The instance at `index`, in the order of the names.
    subscript(index: Int) -> InstanceProcess {
        instances[index]
    }

    /// How many origin calls, of every instance, were recorded for `key`.
    ///
    /// - Parameter key: The key.
    /// - Returns: The rows of `test_origin_calls` for it.
    /// - Throws: A database error.
    func originCalls(for key: String) async throws -> Int64 {
        try await withClient(server) { client in
            try await scalar(client, "SELECT count(*) FROM test_origin_calls WHERE key = \(key)") ?? 0
        }
    }

    /// Quits every instance still running, expecting each to exit with status 0, then stops the server.
    ///
    /// - Throws: ``InstanceFailure`` when an instance had to be killed; a server error.
    func terminate() async throws {
        for instance in instances where instance.output.status == nil {
            let status = try await instance.terminate()
            #expect(status == 0, "instance \(instance.name) exited with status \(status)")
        }
        try await server.stop()
    }
}
