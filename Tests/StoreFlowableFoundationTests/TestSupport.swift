import Foundation
import StoreFlowable
import StoreFlowableFoundation
import Testing

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// The value the tests and the crash writer store: `payload` is `generation`'s letter repeated, so a
/// read can tell a complete value from a mixture of two.
struct Blob: Codable, Sendable, Equatable {
    var key: Int
    var generation: Int
    var payload: String

    /// The value of `key` for `generation`, `bytes` letters long (as the crash writer makes it).
    init(key: Int, generation: Int, bytes: Int) {
        self.key = key
        self.generation = generation
        payload = String(decoding: [UInt8](repeating: Self.letter(generation), count: bytes), as: UTF8.self)
    }

    /// The letter of a generation.
    static func letter(_ generation: Int) -> UInt8 {
        UInt8(97 + generation % 26)
    }

    /// Whether the payload is exactly `bytes` copies of the generation's letter.
    func isComplete(bytes: Int) -> Bool {
        // Compared as a whole: far faster than byte by byte in a debug build.
        payload == Blob(key: key, generation: generation, bytes: bytes).payload
    }
}

/// Collects a cache's events, from any task.
final class EventLog: Sendable {
    private let events = LockedValue<[DiskCacheEvent]>([])

    /// The handler to pass to a cache.
    var handler: @Sendable (DiskCacheEvent) -> Void {
        { [events] event in events.withLock { $0.append(event) } }
    }

    /// Every event so far, in order.
    var all: [DiskCacheEvent] { events.withLock { $0 } }

    /// The damaged files reported so far.
    var damaged: [DiskCacheEvent] {
        all.filter {
            if case .removedDamagedFile = $0 { return true }
            return false
        }
    }
}

/// A fresh folder for one test, removed (with everything in it) when `body` returns or throws.
func withTemporaryFolder<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    let folder = FileManager.default.temporaryDirectory.appending(
        path: "StoreFlowableFoundationTests-\(UUID().uuidString)", directoryHint: .isDirectory)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer {
        makeRemovable(folder)
        try? FileManager.default.removeItem(at: folder)
    }
    return try await body(folder)
}

/// Gives every folder under `url` its owner's write permission back, so that it can be removed.
func makeRemovable(_ url: URL) {
    let path = url.path(percentEncoded: false)
    _ = chmod(path, 0o700)
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
    for name in names {
        var isFolder: ObjCBool = false
        let child = url.appending(path: name)
        if FileManager.default.fileExists(atPath: child.path(percentEncoded: false), isDirectory: &isFolder),
            isFolder.boolValue
        {
            makeRemovable(child)
        }
    }
}

/// The names of the files in `folder`, sorted.
func fileNames(in folder: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false))) ?? []).sorted()
}

/// The names of the entry files in `folder`.
func entryFiles(in folder: URL) -> [String] {
    fileNames(in: folder).filter { $0.hasSuffix(".entry") }
}

/// The names of the temporary files in `folder`.
func temporaryFiles(in folder: URL) -> [String] {
    fileNames(in: folder).filter { $0.hasPrefix(".tmp-") }
}

/// Whether a file exists at `path`.
func fileExists(_ path: String) -> Bool {
    FileManager.default.fileExists(atPath: path)
}

/// The bytes of the file at `path`.
func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(filePath: path)))
}

/// Replaces the file at `path` by `bytes`.
func writeBytes(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(filePath: path))
}

/// Sets the modification time of the file at `path` to `secondsAgo` seconds before now.
func setModificationTime(of path: String, secondsAgo: Double) throws {
    try FileManager.default.setAttributes(
        [.modificationDate: Date(timeIntervalSinceNow: -secondsAgo)], ofItemAtPath: path)
}

/// The size of the file at `path`.
func fileSize(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return try #require(attributes[.size] as? Int)
}

/// Makes a cache on `directory` with the tests' defaults.
func makeCache<Key: Hashable & Sendable & Codable, Value: Sendable & Codable>(
    _ directory: URL, name: String = "cache", policy: FreshnessPolicy = .forever, clock: any CacheClock,
    durability: DiskCacheDurability = .atomic, sizeLimit: Int? = nil, events: EventLog? = nil,
    as _: (Key, Value).Type = (Key, Value).self
) throws -> DiskCache<Key, Value> {
    try DiskCache<Key, Value>(
        name: name, directory: directory, policy: policy, clock: clock, durability: durability,
        sizeLimit: sizeLimit, events: events?.handler)
}
