import Benchmark
import PostgresNIO
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowablePostgres
import StoreFlowablePostgresTestServer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// MARK: PostgresCache

/// `PostgresCache` (Integrations/Postgres) on a throwaway PostgreSQL server that the benchmark starts
/// (``TestPostgresServer``: initdb and pg_ctl on a free loopback port, as the `postgres` user under root),
/// each paired with what a user would write by hand over the same postgres-nio `PostgresClient`,
/// measured against the same server in the same run:
///
/// - "PostgresCache.storeHit" (`requireData()` of a `KeyedStore` over the cache, on a fresh entry) and
///   "PostgresCache.read" (`entry(forKey:)`) vs "PostgresCache.baseline.select" (one `SELECT value,
///   stored_at … WHERE key = $1` on the cache's table, binding the key as the cache stores it, and the
///   JSON decoding of the value), and vs "PostgresCache.baseline.sameSelect" (the cache's own
///   five-column statement by hand). Target for the store hit against the latter: 1.1×.
/// - "PostgresCache.write" (`setEntry(_:forKey:)`, which upserts and notifies in one statement) vs
///   "PostgresCache.baseline.upsert" (the JSON encoding and one `INSERT … ON CONFLICT DO UPDATE` of the
///   same row in a table of the same columns, without `pg_notify`). Both sides alternate between two
///   values, so that every write changes the row (the cache rewrites an unchanged value silently).
/// - "PostgresCache.updateToSubscriber": two instances (two cache objects on one table, each with its
///   own `KeyedStore`); B runs `listenForChanges(reloading:)` and a `publish()` subscriber on one key.
///   From `update(newData:)` through A's store until B's subscriber has the new value, vs
///   "PostgresCache.baseline.notifyRoundTrip": from sending a bare `NOTIFY` on one connection of the
///   same client until a `LISTEN` on another receives it.
///
/// Every benchmark runs in a process of its own (the benchmark package starts one per benchmark): its
/// setup starts the server once (``TestPostgresServer/shared``, started again if a previous benchmark
/// of the process stopped it), its teardown closes the client and stops the server, and the launcher's
/// watchdog stops it and deletes its folder if the process dies first.
///
/// Their malloc counts include what postgres-nio's event-loop threads allocate during the measurement,
/// and move between runs (up to about 35 per operation for the reads, with no change in the code: how
/// the rows arrive and which thread runs what), so their tolerance is 50 mallocs.
func postgresCacheBenchmarks() {
    let config = configuration(maxDuration: .seconds(2), maxIterations: 5_000, mallocTolerance: 50)
    let record = SQLRecord(id: 42, name: "Ada", bio: String(repeating: "a", count: 1_000))
    let other = SQLRecord(id: 42, name: "Bob", bio: String(repeating: "b", count: 1_000))

    Benchmark(
        "PostgresCache.baseline.select", configuration: config,
        closure: { benchmark in
            guard let client = bench.client else { return benchmark.error("not set up") }
            let table = bench.table
            benchmark.startMeasurement()
            // The key bound as the caller has it, an Int, in the column's form (its decimal text).
            let key = Data(String(42).utf8)
            let rows = try await client.query("SELECT value, stored_at FROM \(unescaped: table) WHERE key = \(key)")
            var found: Data?
            for try await (value, _) in rows.decode((Data, Int64).self) { found = value }
            guard let bytes = found else { return benchmark.error("no row") }
            let value = try JSONDecoder().decode(SQLRecord.self, from: bytes)
            benchmark.stopMeasurement()
            if value.id != 42 { benchmark.error("the row was not read") }
        },
        setup: { try await bench.setUp(record: record) }, teardown: { await bench.tearDown() })

    Benchmark(
        "PostgresCache.baseline.sameSelect", configuration: config,
        closure: { benchmark in
            guard let client = bench.client else { return benchmark.error("not set up") }
            let table = bench.table
            benchmark.startMeasurement()
            // The cache's own statement (value, time, mark, format and row number), by hand, decoding every
            // column it decodes and the value.
            let key = Data(String(42).utf8)
            let rows = try await client.query(
                "SELECT value, stored_at, invalidated, format, seq FROM \(unescaped: table) WHERE key = \(key)")
            var found: Data?
            for try await (value, _, _, _, _) in rows.decode((Data, Int64, Bool, Int32, Int64).self) { found = value }
            guard let bytes = found else { return benchmark.error("no row") }
            let value = try JSONDecoder().decode(SQLRecord.self, from: bytes)
            benchmark.stopMeasurement()
            if value.id != 42 { benchmark.error("the row was not read") }
        },
        setup: { try await bench.setUp(record: record) }, teardown: { await bench.tearDown() })

    Benchmark(
        "PostgresCache.read", configuration: config,
        closure: { benchmark in
            guard let cache = bench.cache else { return benchmark.error("not set up") }
            benchmark.startMeasurement()
            let entry = try await cache.entry(forKey: 42)
            benchmark.stopMeasurement()
            if entry?.value.id != 42 { benchmark.error("the entry was not read") }
        },
        setup: { try await bench.setUp(record: record) }, teardown: { await bench.tearDown() })

    Benchmark(
        "PostgresCache.storeHit", configuration: config,
        closure: { benchmark in
            guard let store = bench.store else { return benchmark.error("not set up") }
            benchmark.startMeasurement()
            let value = try await store[42].requireData()
            benchmark.stopMeasurement()
            if value.id != 42 { benchmark.error("the value was not read") }
        },
        setup: { try await bench.setUp(record: record) }, teardown: { await bench.tearDown() })

    Benchmark(
        "PostgresCache.baseline.upsert", configuration: config,
        closure: { benchmark in
            guard let client = bench.client else { return benchmark.error("not set up") }
            let table = bench.baselineTable
            let written = bench.nextRound().isMultiple(of: 2) ? record : other
            let storedAt = Int64(Date().timeIntervalSince1970 * 1_000_000_000)
            benchmark.startMeasurement()
            let key = Data(String(42).utf8)
            let bytes = try JSONEncoder().encode(written)
            try await client.query(
                """
                INSERT INTO \(unescaped: table) (key, value, stored_at) VALUES (\(key), \(bytes), \(storedAt))
                ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, stored_at = EXCLUDED.stored_at
                """)
            benchmark.stopMeasurement()
        },
        setup: { try await bench.setUp(record: record) }, teardown: { await bench.tearDown() })

    Benchmark(
        "PostgresCache.write", configuration: config,
        closure: { benchmark in
            guard let cache = bench.cache else { return benchmark.error("not set up") }
            let written = bench.nextRound().isMultiple(of: 2) ? record : other
            let entry = CacheEntry(value: written, storedAt: cache.clock.now)
            benchmark.startMeasurement()
            try await cache.setEntry(entry, forKey: 42)
            benchmark.stopMeasurement()
        },
        setup: { try await bench.setUp(record: record) }, teardown: { await bench.tearDown() })

    let roundTrip = configuration(maxDuration: .seconds(2), maxIterations: 2_000, mallocTolerance: 50)

    Benchmark(
        "PostgresCache.baseline.notifyRoundTrip", configuration: roundTrip,
        closure: { benchmark in
            guard let client = bench.client else { return benchmark.error("not set up") }
            let round = bench.nextRound()
            bench.arrivals.begin(round: round, expecting: 1)
            benchmark.startMeasurement()
            try await client.query("NOTIFY storeflowable_bench_baseline, '\(unescaped: String(round))'")
            await bench.arrivals.waitForAll()
            benchmark.stopMeasurement()
        },
        setup: {
            try await bench.setUp(record: record)
            try await bench.startBaselineListener()
        },
        teardown: { await bench.tearDown() })

    Benchmark(
        "PostgresCache.updateToSubscriber", configuration: roundTrip,
        closure: { benchmark in
            guard let writer = bench.store else { return benchmark.error("not set up") }
            let round = bench.nextRound()
            bench.arrivals.begin(round: round, expecting: 1)
            var written = record
            written.id = round
            benchmark.startMeasurement()
            await writer[bench.watchedKey].update(newData: written)
            await bench.arrivals.waitForAll()
            benchmark.stopMeasurement()
        },
        setup: {
            try await bench.setUp(record: record)
            try await bench.startSecondInstance()
        },
        teardown: { await bench.tearDown() })
}

/// The state of the benchmark that runs in this process.
private let bench = PostgresCacheBench()

/// The server, a running client, the cache (instance A) holding the record under key 42 with a store
/// over it, and what a benchmark adds (instance B and its subscriber, the baseline's listener), set up
/// before a benchmark and taken down after it.
private final class PostgresCacheBench: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: the fields are written only by the setup and teardown functions,
    // which the benchmark package runs before and after the benchmark's iterations, never at the same
    // time as them, and by `nextRound()`, which only the iterations call, one after the other. The tasks
    // started here touch only `arrivals` (thread-safe) and the values captured when they start.
    /// The cache's name, new for each setup (a benchmark that runs after another in the same process,
    /// as in `swift run`, finds the tables of the previous one on the restarted server).
    private(set) var name = "bench"
    /// The key the two-instance benchmark writes through A and watches through B.
    let watchedKey = 7
    /// The arrivals of the subscriber or listener, tagged with the round that wrote them.
    let arrivals = Arrivals()
    private(set) var client: PostgresClient?
    private(set) var cache: PostgresCache<Int, SQLRecord>?
    private(set) var store: KeyedStore<PostgresCache<Int, SQLRecord>>?
    private var server: TestPostgresServer?
    private var tasks: [Task<Void, Never>] = []
    private var clientRun: Task<Void, Never>?
    private var round = 0
    private var setups = 0
    private var serverStopped = false

    /// The cache's table.
    var table: String { "storeflowable_cache_\(name)" }
    /// The baseline's upsert table, with the key, value and time columns of the cache's table.
    var baselineTable: String { "storeflowable_baseline_\(name)" }

    /// The next round number: 1, 2, …
    func nextRound() -> Int {
        round += 1
        return round
    }

    /// Starts the server (once per process; again after a teardown stopped it) and a client, migrates
    /// a new cache, writes `record` under 42 and a copy with `id` 0 under the watched key, and makes a
    /// store over the cache.
    func setUp(record: SQLRecord) async throws {
        let server = try await TestPostgresServer.launchShared()
        if serverStopped {
            try await server.start()
            serverStopped = false
        }
        self.server = server
        setups += 1
        name = "bench\(setups)"
        let client = PostgresClient(configuration: server.configuration(connectTimeout: .seconds(10)))
        clientRun = Task { await client.run() }
        self.client = client
        try await PostgresCacheSchema.migrate(name: name, client: client)
        try await client.query(
            "CREATE TABLE \(unescaped: baselineTable) (key BYTEA PRIMARY KEY, value BYTEA NOT NULL, stored_at BIGINT NOT NULL)"
        )
        let cache = try await PostgresCache<Int, SQLRecord>(
            name: name, client: client, policy: FreshnessPolicy(freshFor: .seconds(3_600)))
        try await cache.setEntry(CacheEntry(value: record, storedAt: cache.clock.now), forKey: 42)
        var watched = record
        watched.id = 0
        try await cache.setEntry(CacheEntry(value: watched, storedAt: cache.clock.now), forKey: watchedKey)
        self.cache = cache
        store = KeyedStore(cache: cache) { _ in throw CancellationError() }
        round = 0
    }

    /// Starts a listener of the channel `storeflowable_bench_baseline` on a connection of its own that
    /// reports each notification's payload (a round number) to ``arrivals``; returns once it listens.
    func startBaselineListener() async throws {
        guard let client else { throw SetupFailed(description: "no client") }
        let arrivals = arrivals
        let (listening, signal) = AsyncStream.makeStream(of: Void.self)
        tasks.append(
            Task {
                try? await client.withConnection { connection in
                    try await connection.listen(on: "storeflowable_bench_baseline") { notifications in
                        signal.yield()
                        for try await notification in notifications {
                            if let round = Int(notification.payload) { arrivals.arrive(round: round) }
                        }
                    }
                }
                signal.finish()
            })
        for await _ in listening { return }
        throw SetupFailed(description: "the baseline's LISTEN failed")
    }

    /// Opens instance B (a second cache object on the table, with a store of its own), runs its
    /// `listenForChanges(reloading:)` and a `publish()` subscriber on ``watchedKey`` that reports the
    /// `id` of each completed value to ``arrivals``; returns once both are ready (the subscriber saw the
    /// watched key's first value, `id` 0).
    func startSecondInstance() async throws {
        guard let client else { throw SetupFailed(description: "no client") }
        let (connected, signal) = AsyncStream.makeStream(of: Void.self)
        let second = try await PostgresCache<Int, SQLRecord>(
            name: name, client: client, policy: FreshnessPolicy(freshFor: .seconds(3_600)),
            events: { event in if case .listenerConnected = event { signal.yield() } })
        let stores = KeyedStore(cache: second) { _ in throw CancellationError() }
        tasks.append(Task { await second.listenForChanges(reloading: stores) })
        for await _ in connected { break }
        let arrivals = arrivals
        let key = watchedKey
        arrivals.begin(round: 0, expecting: 1)
        tasks.append(
            Task {
                for await state in stores[key].publish() {
                    if case .completed(let value, _, _) = state { arrivals.arrive(round: value.id) }
                }
            })
        await arrivals.waitForAll()
    }

    /// Cancels the tasks, closes the client and stops the server.
    func tearDown() async {
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        tasks = []
        store = nil
        cache = nil
        clientRun?.cancel()
        await clientRun?.value
        client = nil
        do {
            try await server?.stop()
            serverStopped = server != nil
        } catch {
            print("PostgresCache benchmarks: could not stop the server: \(error)")
        }
        server = nil
    }

    /// Why a benchmark's setup failed.
    struct SetupFailed: Error, CustomStringConvertible {
        var description: String
    }
}
