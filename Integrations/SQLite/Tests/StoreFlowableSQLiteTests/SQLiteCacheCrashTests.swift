import Foundation
import SQLiteNIO
import StoreFlowable
import StoreFlowableSQLite
import Testing

/// The record `sqlite-cache-writer` writes (the same fields, decoded from the same JSON).
private struct CrashRecord: Codable, Sendable {
    var number: Int
    var payload: [UInt8]

    /// Whether the payload is the one the writer made for `number`: a value mixed from two writes is not.
    func isWhole(payloadBytes: Int) -> Bool {
        payload.count == payloadBytes && payload.allSatisfy { $0 == UInt8(number % 251) }
    }
}

@Suite("SQLiteCache: processes killed mid-write", .serialized, .timeLimit(.minutes(2)))
struct SQLiteCacheCrashTests {
    /// 8 rounds: a writer process killed with SIGKILL after a different number of writes (large values,
    /// so that a kill often lands inside one). Afterwards the file passes SQLite's integrity check, opens,
    /// and every key holds a whole value from one write, no older than the writes reported done.
    @Test func aWriterKilledMidWriteLeavesWholeValues() async throws {
        let payloadBytes = 64_000
        let keys = 4
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            var reported = -1
            for round in 0..<8 {
                let writer = try WriterProcess(path: path, name: "records", keys: keys, payloadBytes: payloadBytes)
                #expect(try await writer.readLine() == "ready")
                let writes = keys + round * 5
                try await writer.waitForWrites(writes)
                await writer.kill()
                reported = writes - 1
                try await expectIntact(path)
                let cache = try await SQLiteCache<Int, CrashRecord>.open(name: "records", path: path)
                for key in 0..<keys {
                    let record = try #require(try await cache.entry(forKey: key)?.value, "round \(round), key \(key)")
                    #expect(record.isWhole(payloadBytes: payloadBytes), "round \(round), key \(key): \(record.number)")
                    #expect(record.number % keys == key)
                }
                // The last write reported done survived the kill (each run starts again at 0, so only
                // this run's key of it is checked).
                let last = try #require(try await cache.entry(forKey: reported % keys)?.value)
                #expect(last.number >= reported, "round \(round)")
                await cache.close()
            }
        }
    }

    /// Two writer processes on one file at once (one writer at a time by SQLite's lock), both killed:
    /// the file is intact and readable, and each key's value is whole.
    @Test func twoWriterProcessesOnOneFileKilledTogetherLeaveItReadable() async throws {
        let payloadBytes = 50_000
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let first = try WriterProcess(path: path, name: "records", keys: 3, payloadBytes: payloadBytes)
            let second = try WriterProcess(path: path, name: "records", keys: 3, payloadBytes: payloadBytes)
            #expect(try await first.readLine() == "ready")
            #expect(try await second.readLine() == "ready")
            try await first.waitForWrites(20)
            try await second.waitForWrites(20)
            await first.kill()
            await second.kill()
            try await expectIntact(path)
            let cache = try await SQLiteCache<Int, CrashRecord>.open(name: "records", path: path)
            for key in 0..<3 {
                let record = try #require(try await cache.entry(forKey: key)?.value)
                #expect(record.isWhole(payloadBytes: payloadBytes))
            }
            await cache.close()
        }
    }

    /// SQLite's own check of the file: `ok`.
    private func expectIntact(_ path: String) async throws {
        try await withRawConnection(to: path) { connection in
            let rows = try await connection.query("PRAGMA integrity_check")
            #expect(rows.compactMap { $0.columns.first?.data.string } == ["ok"])
        }
    }
}
