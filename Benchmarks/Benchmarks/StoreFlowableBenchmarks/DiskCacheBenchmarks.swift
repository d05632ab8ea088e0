import Benchmark
import StoreFlowable
import StoreFlowableFoundation

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// MARK: DiskCache

/// A cached record of about 1 KB once encoded as JSON.
private struct DiskRecord: Codable, Sendable {
    var id: Int
    var name: String
    var bio: String
}

/// `DiskCache` reads and writes of one 1 KB entry, each paired with the file system primitive it is
/// built on, measured on the same folder in the same run:
///
/// - "DiskCache.read" (`entry(forKey:)`: open, read, check the header and checksum, compare the key,
///   decode the JSON value) vs "DiskCache.baseline.readFile" (open, `fstat` and read the same file's
///   bytes, close).
/// - "DiskCache.write" (`setEntry(_:forKey:)`: encode the JSON value, checksum, write a temporary file,
///   rename it over the entry) vs "DiskCache.baseline.tempFileAndRename" (write the same file's bytes to
///   a temporary file and rename it over a file).
///
/// Each benchmark works in a folder of its own under the temporary directory, created in its setup and
/// removed in its teardown.
func diskCacheBenchmarks() {
    let config = configuration(maxDuration: .seconds(1), maxIterations: 20_000, mallocTolerance: 4)
    let record = DiskRecord(id: 42, name: "Ada", bio: String(repeating: "a", count: 1_000))
    let bench = DiskCacheBench(record: record)

    Benchmark(
        "DiskCache.baseline.readFile", configuration: config,
        closure: { benchmark in
            benchmark.startMeasurement()
            guard let bytes = readWholeFile(bench.entryPath) else { return benchmark.error("cannot read the file") }
            benchmark.stopMeasurement()
            blackHole(bytes)
        },
        setup: { try await bench.setUp(name: "readFile") }, teardown: { bench.tearDown() })

    Benchmark(
        "DiskCache.read", configuration: config,
        closure: { benchmark in
            guard let cache = bench.cache else { return benchmark.error("not set up") }
            benchmark.startMeasurement()
            let entry = try await cache.entry(forKey: 42)
            benchmark.stopMeasurement()
            if entry?.value.id != 42 { benchmark.error("the entry was not read") }
            blackHole(entry)
        },
        setup: { try await bench.setUp(name: "read") }, teardown: { bench.tearDown() })

    Benchmark(
        "DiskCache.baseline.tempFileAndRename", configuration: config,
        closure: { benchmark in
            benchmark.startMeasurement()
            let written = writeByRenaming(bench.entryBytes, to: bench.baselinePath)
            benchmark.stopMeasurement()
            if !written { benchmark.error("cannot write the file") }
        },
        setup: { try await bench.setUp(name: "tempFileAndRename") }, teardown: { bench.tearDown() })

    Benchmark(
        "DiskCache.write", configuration: config,
        closure: { benchmark in
            guard let cache = bench.cache else { return benchmark.error("not set up") }
            let entry = CacheEntry(value: record, storedAt: cache.clock.now)
            benchmark.startMeasurement()
            try await cache.setEntry(entry, forKey: 42)
            benchmark.stopMeasurement()
        },
        setup: { try await bench.setUp(name: "write") }, teardown: { bench.tearDown() })
}

/// One folder with a cache holding the record, set up before a benchmark and removed after it.
private final class DiskCacheBench: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: the fields are written only by `setUp` and `tearDown`, which the
    // benchmark package runs before and after the benchmark's iterations, never at the same time as them.
    let record: DiskRecord
    private(set) var folder = URL(filePath: "/nonexistent")
    private(set) var cache: DiskCache<Int, DiskRecord>?
    /// The entry file of key 42.
    private(set) var entryPath = ""
    /// Its bytes.
    private(set) var entryBytes: [UInt8] = []
    /// The file the baseline writer replaces.
    private(set) var baselinePath = ""

    init(record: DiskRecord) {
        self.record = record
    }

    /// Creates a fresh folder and cache, and stores the record under key 42.
    func setUp(name: String) async throws {
        folder = FileManager.default.temporaryDirectory.appending(
            path: "StoreFlowableBenchmarks-DiskCache-\(getpid())-\(name)", directoryHint: .isDirectory)
        try? FileManager.default.removeItem(at: folder)
        let cache = try DiskCache<Int, DiskRecord>(name: "bench", directory: folder)
        try await cache.setEntry(CacheEntry(value: record, storedAt: cache.clock.now), forKey: 42)
        self.cache = cache
        // The only entry file in the folder is key 42's.
        let cacheFolder = cache.folder.path(percentEncoded: false)
        let names = try FileManager.default.contentsOfDirectory(atPath: cacheFolder)
        entryPath = cacheFolder + (names.first { $0.hasSuffix(".entry") } ?? "missing")
        entryBytes = readWholeFile(entryPath) ?? []
        baselinePath = cacheFolder + "baseline"
    }

    /// Removes the folder.
    func tearDown() {
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Reads a whole file with `open`, `fstat`, `read` and `close`, as `DiskCache` reads an entry.
private func readWholeFile(_ path: String) -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return nil }
    let size = Int(info.st_size)
    var bytes = [UInt8](repeating: 0, count: size)
    let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, size) }
    return count == size ? bytes : nil
}

/// Writes `bytes` to a new temporary file next to `path` and renames it over `path`, as `DiskCache`
/// writes an entry (without encoding or checksum).
private func writeByRenaming(_ bytes: [UInt8], to path: String) -> Bool {
    let temporary = path + ".tmp-\(UInt64.random(in: .min ... .max))"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return false }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard close(descriptor) == 0, written == bytes.count, rename(temporary, path) == 0 else {
        unlink(temporary)
        return false
    }
    return true
}
