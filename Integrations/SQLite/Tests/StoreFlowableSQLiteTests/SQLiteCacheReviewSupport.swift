import Foundation
import Logging
import NIOPosix
import SQLiteNIO
import StoreFlowable
import StoreFlowableFoundation
import Synchronization
import Testing

@testable import StoreFlowableSQLite

// Helpers of the review tests (SQLiteCacheReviewTests.swift).

/// A connection of the test's own, on a thread pool of its own, whose statements can be run from
/// synchronous code (a predicate, a clock) without the cooperative pool: it blocks the calling thread
/// on a future. Used as "another process" writing in the middle of a cache call.
final class SyncConnection: Sendable {
    let pool: NIOThreadPool
    let connection: SQLiteConnection

    init(path: String) async throws {
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        connection = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: pool, logger: Logger(label: "review"),
            on: MultiThreadedEventLoopGroup.singleton.any())
    }

    /// Runs `sql` to its end, blocking the calling thread.
    @discardableResult
    func run(_ sql: String, _ binds: [SQLiteData] = []) throws -> [SQLiteRow] {
        try connection.query(sql, binds).wait()
    }

    /// Removes `key` from the cache's table and writes it again (with the cache's own upsert), as
    /// another process's `removeEntry` then `setEntry` would.
    func removeAndWrite<Key, Value>(
        _ cache: SQLiteCache<Key, Value>, key: Key, value: Value, storedAt: CacheTime
    ) throws {
        let keyData = try cache.coder.encodeKey(key)
        let valueData = try cache.coder.encodeValue(value)
        try run(cache.table.delete, [(keyData.sqliteData ?? .null)])
        try run(
            cache.table.upsert,
            [
                (keyData.sqliteData ?? .null), (valueData.sqliteData ?? .null),
                .integer(Int(storedAt.nanosecondsSince1970)),
                .integer(0), .integer(cache.valueFormat), .integer(keyData.count + valueData.count),
            ])
    }

    func close() async throws {
        try await connection.close()
        try await pool.shutdownGracefully()
    }
}

/// Whether `operation` (started in a task of its own) ends within `limit`. It is not awaited past the
/// limit: its task is handed back so that the test can await it once it has unblocked it.
func endsWithin(
    _ limit: Duration, _ operation: @escaping @Sendable () async -> Void
) async -> (ended: Bool, task: Task<Void, Never>) {
    let (stream, continuation) = AsyncStream<Bool>.makeStream()
    let task = Task {
        await operation()
        continuation.yield(true)
    }
    let timer = Task {
        try? await Task.sleep(for: limit)
        continuation.yield(false)
    }
    var iterator = stream.makeAsyncIterator()
    let ended = await iterator.next() ?? false
    timer.cancel()
    return (ended, task)
}

/// A connection to `path` that runs on a thread pool of its own (not `NIOThreadPool.singleton`, which
/// the caches use), so that it can still answer when the caches' pool is taken; closed after `body`.
func withPrivateConnection<Result>(
    to path: String, _ body: (SQLiteConnection) async throws -> Result
) async throws -> Result {
    let pool = NIOThreadPool(numberOfThreads: 1)
    pool.start()
    let connection = try await SQLiteConnection.open(
        storage: .file(path: path), threadPool: pool, logger: Logger(label: "review"),
        on: MultiThreadedEventLoopGroup.singleton.any())
    do {
        let result = try await body(connection)
        try await connection.close()
        try await pool.shutdownGracefully()
        return result
    } catch {
        try? await connection.close()
        try? await pool.shutdownGracefully()
        throw error
    }
}

/// The descriptors of this process open on `path` or its `-wal` and `-shm` files (Linux only: `nil`
/// elsewhere).
func openDescriptors(on path: String) -> Int? {
    #if os(Linux)
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        let real = URL(filePath: path).resolvingSymlinksInPath().path(percentEncoded: false)
        return entries.count { entry in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")
            else { return false }
            return target == real || target == real + "-wal" || target == real + "-shm"
        }
    #else
        return nil
    #endif
}

/// A clock at a fixed time that runs `hook` (once) the first time it is read after `arm()`.
final class HookedClock: CacheClock, Sendable {
    private let time: CacheTime
    private let hook = Mutex<(@Sendable () -> Void)?>(nil)

    init(_ time: CacheTime) { self.time = time }

    /// Runs `body` on the next reading of ``now``.
    func arm(_ body: @escaping @Sendable () -> Void) { hook.withLock { $0 = body } }

    var now: CacheTime {
        let body = hook.withLock { hook in
            defer { hook = nil }
            return hook
        }
        body?()
        return time
    }
}

/// Keys and values as their own bytes: a coder for raw `Data` values (as a user caching images or
/// pre-encoded bodies would write).
struct RawDataCoder: DiskCacheCoder {
    func encodeKey(_ key: String) throws -> Data { Data(key.utf8) }
    func decodeKey(from data: Data) throws -> String { String(decoding: data, as: UTF8.self) }
    func encodeValue(_ value: Data) throws -> Data { value }
    func decodeValue(from data: Data) throws -> Data { data }
}

/// Objects a test keeps alive to the end of the process (caches whose release would crash the run).
let keptForever = Mutex<[AnyObject]>([])

/// The environment variable naming the child test a child process runs.
let childTestVariable = "SQLREV_CHILD_TEST"

/// Whether this process is a child started by ``runChildTest(_:)`` to run the test `name`.
func isChild(_ name: String) -> Bool {
    ProcessInfo.processInfo.environment[childTestVariable] == name
}

/// Runs the test `name` (gated by ``isChild(_:)``) alone in a child process of this test binary, so that
/// a crash fails the calling test instead of the whole run; returns how it ended and its output. The
/// waiting is done on a thread of its own (``onThreadOfItsOwn(_:)``), not on the cooperative pool.
func runChildTest(_ name: String) async throws -> (exitedNormally: Bool, status: Int32, output: String) {
    try await onThreadOfItsOwn { try runChildTestBlocking(name) }
}

private func runChildTestBlocking(_ name: String) throws -> (exitedNormally: Bool, status: Int32, output: String) {
    #if os(Linux)
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    #else
        let binary = CommandLine.arguments[0]
    #endif
    let process = Process()
    process.executableURL = URL(filePath: binary)
    process.arguments = ["--testing-library", "swift-testing", "--filter", name]
    var environment = ProcessInfo.processInfo.environment
    environment[childTestVariable] = name
    process.environment = environment
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let output = String(decoding: data, as: UTF8.self)
    return (process.terminationReason == .exit, process.terminationStatus, output)
}

/// Records an issue unless the child process ended normally with status 0, quoting its failures.
func expectChildPasses(
    _ child: (exitedNormally: Bool, status: Int32, output: String), sourceLocation: SourceLocation = #_sourceLocation
) {
    let lines = child.output.split(separator: "\n").filter {
        $0.contains("Fatal") || $0.contains("Assertion") || $0.contains("recorded an issue") || $0.contains("↳")
    }
    #expect(
        child.exitedNormally && child.status == 0,
        "the child \(child.exitedNormally ? "failed" : "crashed"): \(lines.filter { !$0.contains("///") && !$0.contains("Testing Library") && !$0.contains("Target Platform") }.prefix(6).joined(separator: " | "))",
        sourceLocation: sourceLocation)
}
