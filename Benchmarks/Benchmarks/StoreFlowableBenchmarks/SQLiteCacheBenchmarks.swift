import Benchmark
import SQLiteNIO
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableSQLite

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

// MARK: SQLiteCache

/// A cached record of about 1 KB once encoded as JSON (the PostgresCache pair uses it too).
struct SQLRecord: Codable, Sendable {
    var id: Int
    var name: String
    var bio: String
}

/// `SQLiteCache` (Integrations/SQLite) on a database file in the temporary directory, each paired with
/// what a user would write by hand over the same sqlite-nio connection API, measured on the same file in
/// the same run:
///
/// - "SQLiteCache.storeHit" (`requireData()` of a `KeyedStore` over the cache, on a fresh entry) and
///   "SQLiteCache.read" (`entry(forKey:)`) vs "SQLiteCache.baseline.select" (one `SELECT value,
///   stored_at … WHERE key = ?` on a connection of its own to the same file, binding the key as the
///   cache stores it, and the JSON decoding of the value), and vs "SQLiteCache.baseline.sameSelect" (the
///   cache's own five-column statement by hand, every column read: the "same SELECT"). Target
///   for the store hit against the latter: 1.1×.
/// - "SQLiteCache.write" (`setEntry(_:forKey:)`) vs "SQLiteCache.baseline.upsert" (the JSON encoding
///   and one `INSERT … ON CONFLICT DO UPDATE` of the same row).
func sqliteCacheBenchmarks() {
    let config = configuration(maxDuration: .seconds(1), maxIterations: 20_000, mallocTolerance: 4)
    let record = SQLRecord(id: 42, name: "Ada", bio: String(repeating: "a", count: 1_000))
    let bench = SQLiteCacheBench(record: record)

    Benchmark(
        "SQLiteCache.baseline.select", configuration: config,
        closure: { benchmark in
            guard let connection = bench.connection else { return benchmark.error("not set up") }
            benchmark.startMeasurement()
            // The key bound as the caller has it, an Int, in the column's form (its decimal text).
            let key = SQLiteData.blob(ByteBuffer(string: String(42)))
            let rows = try await connection.query(
                "SELECT value, stored_at FROM storeflowable_cache_bench WHERE key = ?1", [key])
            guard let bytes = rows.first?.column("value").flatMap(Data.init(sqliteData:)),
                rows.first?.column("stored_at")?.integer != nil
            else { return benchmark.error("no row") }
            let value = try JSONDecoder().decode(SQLRecord.self, from: bytes)
            benchmark.stopMeasurement()
            if value.id != 42 { benchmark.error("the row was not read") }
        },
        setup: { try await bench.setUp(name: "select") }, teardown: { await bench.tearDown() })

    Benchmark(
        "SQLiteCache.baseline.sameSelect", configuration: config,
        closure: { benchmark in
            guard let connection = bench.connection else { return benchmark.error("not set up") }
            benchmark.startMeasurement()
            // The cache's own statement (value, time, mark, format and row number), by hand, reading every
            // column it reads and decoding the value.
            let key = SQLiteData.blob(ByteBuffer(string: String(42)))
            let rows = try await connection.query(
                "SELECT value, stored_at, invalidated, format, seq FROM storeflowable_cache_bench WHERE key = ?1", [key]
            )
            guard let columns = rows.first?.columns, columns.count == 5,
                let bytes = Data(sqliteData: columns[0].data), columns[1].data.integer != nil,
                columns[2].data.integer != nil, columns[3].data.integer != nil, columns[4].data.integer != nil
            else { return benchmark.error("no row") }
            let value = try JSONDecoder().decode(SQLRecord.self, from: bytes)
            benchmark.stopMeasurement()
            if value.id != 42 { benchmark.error("the row was not read") }
        },
        setup: { try await bench.setUp(name: "sameSelect") }, teardown: { await bench.tearDown() })

    Benchmark(
        "SQLiteCache.read", configuration: config,
        closure: { benchmark in
            guard let cache = bench.cache else { return benchmark.error("not set up") }
            benchmark.startMeasurement()
            let entry = try await cache.entry(forKey: 42)
            benchmark.stopMeasurement()
            if entry?.value.id != 42 { benchmark.error("the entry was not read") }
        },
        setup: { try await bench.setUp(name: "read") }, teardown: { await bench.tearDown() })

    Benchmark(
        "SQLiteCache.storeHit", configuration: config,
        closure: { benchmark in
            guard let store = bench.store else { return benchmark.error("not set up") }
            benchmark.startMeasurement()
            let value = try await store[42].requireData()
            benchmark.stopMeasurement()
            if value.id != 42 { benchmark.error("the value was not read") }
        },
        setup: { try await bench.setUp(name: "storeHit") }, teardown: { await bench.tearDown() })

    Benchmark(
        "SQLiteCache.baseline.upsert", configuration: config,
        closure: { benchmark in
            guard let connection = bench.connection else { return benchmark.error("not set up") }
            benchmark.startMeasurement()
            let key = SQLiteData.blob(ByteBuffer(string: String(42)))
            let bytes = try JSONEncoder().encode(record)
            _ = try await connection.query(
                """
                INSERT INTO baseline (key, value, stored_at) VALUES (?1, ?2, ?3)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value, stored_at = excluded.stored_at
                """,
                [key, .blob(ByteBuffer(bytes: bytes)), .integer(1)])
            benchmark.stopMeasurement()
        },
        setup: { try await bench.setUp(name: "upsert") }, teardown: { await bench.tearDown() })

    Benchmark(
        "SQLiteCache.write", configuration: config,
        closure: { benchmark in
            guard let cache = bench.cache else { return benchmark.error("not set up") }
            let entry = CacheEntry(value: record, storedAt: cache.clock.now)
            benchmark.startMeasurement()
            try await cache.setEntry(entry, forKey: 42)
            benchmark.stopMeasurement()
        },
        setup: { try await bench.setUp(name: "write") }, teardown: { await bench.tearDown() })
}

/// A database file with the cache holding the record under key 42, a store over it and a connection of
/// the baselines' own, set up before a benchmark and removed after it.
private final class SQLiteCacheBench: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: the fields are written only by `setUp` and `tearDown`, which the
    // benchmark package runs before and after the benchmark's iterations, never at the same time as them.
    let record: SQLRecord
    private(set) var path = ""
    private(set) var cache: SQLiteCache<Int, SQLRecord>?
    private(set) var store: KeyedStore<SQLiteCache<Int, SQLRecord>>?
    private(set) var connection: SQLiteConnection?

    init(record: SQLRecord) {
        self.record = record
    }

    func setUp(name: String) async throws {
        path = FileManager.default.temporaryDirectory.appending(
            path: "StoreFlowableBenchmarks-SQLite-\(getpid())-\(name).sqlite"
        ).path(percentEncoded: false)
        removeFiles()
        let cache = try await SQLiteCache<Int, SQLRecord>.open(
            name: "bench", path: path, policy: FreshnessPolicy(freshFor: .seconds(3_600)))
        try await cache.setEntry(CacheEntry(value: record, storedAt: cache.clock.now), forKey: 42)
        self.cache = cache
        store = KeyedStore(cache: cache) { _ in throw CancellationError() }
        let connection = try await SQLiteConnection.open(storage: .file(path: path))
        // Set as the cache sets its own connection (the file is in WAL mode already; `synchronous` is
        // per connection, and its default, FULL, would make every baseline write wait for the disk).
        _ = try await connection.query("PRAGMA synchronous = NORMAL")
        _ = try await connection.query(
            "CREATE TABLE IF NOT EXISTS baseline (key BLOB PRIMARY KEY, value BLOB NOT NULL, stored_at INTEGER NOT NULL) WITHOUT ROWID"
        )
        self.connection = connection
    }

    func tearDown() async {
        store = nil
        await cache?.close()
        cache = nil
        try? await connection?.close()
        connection = nil
        removeFiles()
    }

    private func removeFiles() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
