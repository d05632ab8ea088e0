import Foundation
import SQLiteNIO
import StoreFlowable
import StoreFlowableSQLite
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The record `sqlite-cache-writer` writes.
private struct ReviewCrashRecord: Codable, Sendable {
    var number: Int
    var payload: [UInt8]
}

/// `aWriterKilledMidWriteLeavesWholeValues` kills the writer as soon as it reports a write, when it has
/// just started JSON-encoding the next 64,000-element payload (milliseconds), so the kill lands in the
/// encoding, almost never inside the SQL: with `setEntry` made non-atomic (a DELETE, then the upsert, with
/// a statement between), it passed 3 runs of 3. Killed right after a report, the writer is always at the
/// same point of its loop: the value found is always the last one reported. With a 16-byte payload and the
/// kill at a random moment of a write, the kill lands in the statements; this test fails on that
/// mutation (and passes on the real code).
@Suite("SQLiteCache review: kills inside the SQL", .serialized, .timeLimit(.minutes(2)))
struct SQLiteCacheReviewCrashTests {
    @Test func aWriterKilledInsideItsStatementsLeavesTheKeysValue() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            for round in 0..<60 {
                let writer = try WriterProcess(path: path, name: "records", keys: 1, payloadBytes: 16)
                #expect(try await writer.readLine() == "ready")
                try await writer.waitForWrites(1 + round % 4)
                // Not a wait for anything: the kill must land at a random moment of the writer's loop (one
                // write takes ~350 µs here); killed at once, it always lands before the next statement.
                usleep(UInt32.random(in: 0...1500))
                await writer.kill()
                let cache = try await SQLiteCache<Int, ReviewCrashRecord>.open(name: "records", path: path)
                let record = try await cache.entry(forKey: 0)
                await cache.close()
                #expect(record != nil, "round \(round): the key's value is gone after a kill")
                if record == nil { return }
            }
        }
    }
}
