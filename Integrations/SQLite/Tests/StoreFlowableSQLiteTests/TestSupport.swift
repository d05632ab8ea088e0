import Foundation
import SQLiteNIO
import StoreFlowable
import StoreFlowableSQLite
import Synchronization
import Testing

/// A fresh folder for one test, removed with everything in it when `body` returns or throws.
@discardableResult
func withTemporaryFolder<Result>(_ body: (String) async throws -> Result) async throws -> Result {
    let folder = FileManager.default.temporaryDirectory.appending(
        path: "StoreFlowableSQLiteTests-\(UUID().uuidString)", directoryHint: .isDirectory)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await body(folder.path(percentEncoded: false))
}

/// A database file path in `folder`.
func databasePath(in folder: String, _ name: String = "cache.sqlite") -> String {
    (folder as NSString).appendingPathComponent(name)
}

/// A connection of the test's own to the file at `path`, for changing rows by hand; closed after `body`.
func withRawConnection<Result>(
    to path: String, _ body: (SQLiteConnection) async throws -> Result
) async throws -> Result {
    let connection = try await SQLiteConnection.open(storage: .file(path: path))
    do {
        let result = try await body(connection)
        try await connection.close()
        return result
    } catch {
        try? await connection.close()
        throw error
    }
}

/// Collects a cache's events.
final class SQLiteEventLog: Sendable {
    private let events = Mutex<[SQLiteCacheEvent]>([])

    /// The handler to pass to the cache.
    var handler: @Sendable (SQLiteCacheEvent) -> Void {
        { event in self.events.withLock { $0.append(event) } }
    }

    /// Every event so far, in order.
    var all: [SQLiteCacheEvent] { events.withLock { $0 } }
}

/// A value with a few fields, as users cache them.
struct Profile: Codable, Sendable, Equatable {
    var id: Int
    var name: String
}

/// A moment with nanoseconds that a seconds-or-milliseconds column would lose.
let preciseTime = CacheTime(nanosecondsSince1970: 1_700_000_000_123_456_789)
