import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres

/// The life of an instance process: connect, migrate, serve commands, shut down.
enum InstanceLifecycle {
    /// Runs a client in a task group for the instance's whole life, migrates the cache and the origin's
    /// table, starts the listener that keeps the store current with the other instances' writes
    /// (`listenForChanges(reloading:)`), prints `ready` once it listens, serves the commands of standard
    /// input until `quit` or its end, prints `bye`, and shuts the client down.
    ///
    /// The store fetches through a `PostgresSingleFlight`, so a key the instances miss at once is
    /// fetched by one of them. The cache's events are printed as `event <description>` and the single
    /// flight's as `flight <description>`, so that tests can wait for them.
    ///
    /// - Parameter settings: The instance's settings.
    /// - Returns: The exit status: 0 after `quit`, 1 when the start failed (after `failed <why>`).
    static func run(_ settings: InstanceSettings) async -> Int32 {
        let client = PostgresClient(configuration: configuration(settings))
        return await withTaskGroup(of: Void.self, returning: Int32.self) { group in
            group.addTask { await client.run() }
            // Cancelling `run()` closes the connections and ends it; the group waits for that.
            defer { group.cancelAll() }
            do {
                try await PostgresCacheSchema.migrate(
                    name: settings.cache, client: client, timeout: settings.timeout * 5)
                try await Origin.createTable(client: client, timeout: settings.timeout * 5)
                let (listening, connected) = AsyncStream.makeStream(of: Void.self)
                let cache = try await PostgresCache<String, String>(
                    name: settings.cache, client: client, timeout: settings.timeout,
                    events: { event in
                        say("event \(event)")
                        if case .listenerConnected = event { connected.yield() }
                    })
                let origin = Origin(
                    client: client, instance: settings.instance, delay: settings.delay, timeout: settings.timeout)
                let singleFlight = PostgresSingleFlight(
                    cache: cache, lease: settings.lease, checkInterval: .milliseconds(5),
                    events: { event in say("flight \(event)") }, origin: { key in try await origin.fetch(key) })
                let store = KeyedStore(cache: cache, fetch: singleFlight.fetch)
                group.addTask {
                    await cache.listenForChanges(
                        reloading: store,
                        retry: PostgresCacheListenerRetry(
                            baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: .none))
                }
                var connections = listening.makeAsyncIterator()
                _ = await connections.next()
                let instance = Instance(store: store)
                say("ready")
                await instance.serve(InputLines.start())
                say("bye")
                return 0
            } catch {
                say("failed \(error)")
                return 1
            }
        }
    }

    /// The client's configuration: no TLS, no password (the test servers trust local users), the
    /// instance's timeout as the connect timeout and as the server's `statement_timeout` and
    /// `lock_timeout` (as Docs/ServerCaches.md advises, so that a statement the cache gave up on is
    /// ended by the server too).
    ///
    /// - Parameter settings: The instance's settings.
    /// - Returns: The configuration.
    static func configuration(_ settings: InstanceSettings) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: settings.host, port: settings.port, username: settings.user, password: nil,
            database: settings.database, tls: .disable)
        configuration.options.connectTimeout = settings.timeout
        let (seconds, attoseconds) = settings.timeout.components
        let milliseconds = String(seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
        // The application name tells the tests which backends are this instance's (its listener's).
        configuration.options.additionalStartupParameters = [
            ("statement_timeout", milliseconds), ("lock_timeout", milliseconds),
            ("application_name", settings.instance),
        ]
        return configuration
    }
}
