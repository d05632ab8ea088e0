import Foundation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

/// A writer that dies at any moment leaves every entry complete: its old value or its new one.
@Suite struct DiskCacheCrashTests {
    /// Where in a write the child is killed.
    enum KillMoment: CustomStringConvertible {
        /// While the first value of a key is written (the key has no old value).
        case duringFirstWrite
        /// Right after the writer announced a write: while it encodes the value.
        case atStart
        /// Right after a write returned.
        case afterWrite
        /// As soon as the temporary file of a write exists: while its bytes are written, or before
        /// the rename.
        case temporaryFileCreated
        /// The same in durable mode, where the file is also flushed to the disk before the rename.
        case temporaryFileCreatedDurable

        var description: String {
            switch self {
            case .duringFirstWrite: "during a first write"
            case .atStart: "at the start of a write"
            case .afterWrite: "right after a write"
            case .temporaryFileCreated: "once the temporary file exists"
            case .temporaryFileCreatedDurable: "once the temporary file exists, in durable mode"
            }
        }
    }

    /// Seed flaw: non-atomic writes (a crash left a torn file); Nuke's readers saw partially written files.
    ///
    /// A child process rewrites three 1 MiB values in a loop and is killed with SIGKILL at several
    /// moments; after each kill a new instance must read every key as a complete value: the last one
    /// written or the one in flight (a key never written may be missing). A kill the moment a temporary
    /// file appears usually lands between its creation and its rename (a window of a millisecond or so),
    /// so that moment is tried several times, and at least one kill must have left its temporary file.
    @Test(.timeLimit(.minutes(1)))
    func killingAWriterMidWriteLeavesEveryEntryCompleteOldOrNew() async throws {
        _ = try CrashWriterProcess.requireBinary()
        try await withTemporaryFolder { folder in
            let keys = 3
            let bytes = 1 << 20
            let moments: [KillMoment] =
                [.duringFirstWrite, .atStart, .afterWrite]
                + Array(repeating: [.temporaryFileCreated, .temporaryFileCreatedDurable], count: 6).joined()
            let cacheFolder = folder.appending(path: "crash")
            try FileManager.default.createDirectory(at: cacheFolder, withIntermediateDirectories: true)
            var written: [Int: Int] = [:]  // the last generation each key's write returned
            var killedMidWrite = 0
            for (round, moment) in moments.enumerated() {
                let leftovers = Set(temporaryFiles(in: cacheFolder))
                let watcher = FolderWatcher(cacheFolder)
                let writer = try CrashWriterProcess([
                    "write-loop", folder.path(percentEncoded: false), "crash", "\(keys)", "\(bytes)",
                    "\(round * 1000)", moment == .temporaryFileCreatedDurable ? "durable" : "atomic",
                ])
                var inFlight: (key: Int, generation: Int)?
                /// Follows one line of the writer's output; returns whether to stop reading and kill.
                func follow(_ line: String) -> Bool {
                    let fields = line.split(separator: " ")
                    switch fields.first {
                    case "start":
                        inFlight = (Int(fields[1]) ?? -1, Int(fields[2]) ?? -1)
                        switch moment {
                        case .duringFirstWrite: return inFlight?.key == keys - 1
                        case .afterWrite: return false
                        case .atStart, .temporaryFileCreated, .temporaryFileCreatedDurable: return true
                        }
                    case "wrote":
                        written[Int(fields[1]) ?? -1] = Int(fields[2]) ?? -1
                        inFlight = nil
                        return moment == .afterWrite
                    case "ready":
                        return false
                    default:
                        Issue.record("unexpected output from the writer: \(line)")
                        return true
                    }
                }
                while let line = try await writer.readLine(), !follow(line) {}
                if moment == .temporaryFileCreated || moment == .temporaryFileCreatedDurable {
                    await writer.kill(
                        onceNewFileIn: watcher, prefix: ".tmp-", ignoring: leftovers, timeout: .seconds(10))
                } else {
                    await writer.kill()
                }
                // A temporary file this writer made and never renamed: it died inside a write.
                if !Set(temporaryFiles(in: cacheFolder)).subtracting(leftovers).isEmpty { killedMidWrite += 1 }
                // What the writer printed before it died counts too.
                for line in try await writer.readAllLines() { _ = follow(line) }

                let events = EventLog()
                let cache: DiskCache<Int, Blob> = try makeCache(
                    folder, name: "crash", clock: SystemCacheClock(), events: events)
                for key in 0..<keys {
                    let entry = try await cache.entry(forKey: key)
                    let expected = [written[key], inFlight?.key == key ? inFlight?.generation : nil].compactMap { $0 }
                    guard let entry else {
                        #expect(written[key] == nil, "key \(key) lost its value after a kill \(moment)")
                        continue
                    }
                    #expect(entry.value.key == key)
                    #expect(expected.contains(entry.value.generation), "key \(key) after a kill \(moment)")
                    #expect(entry.value.isComplete(bytes: bytes), "key \(key) is torn after a kill \(moment)")
                    // A write killed after its rename but before it said so left its new value.
                    written[key] = entry.value.generation
                }
                #expect(events.damaged.isEmpty, "after a kill \(moment): \(events.all)")
            }
            // Kills really landed inside writes, between creating a temporary file and renaming it: on
            // Linux (inotify) nearly all of the twelve that wait for one; elsewhere (polling) at least one.
            #if os(Linux)
                #expect(killedMidWrite >= 3, "only \(killedMidWrite) kills landed inside a write")
            #else
                #expect(killedMidWrite > 0)
            #endif
        }
    }

    /// A crash between writing the temporary file and renaming it leaves the old value readable; the
    /// temporary file is ignored, then removed once it is old enough to be a leftover.
    @Test(.timeLimit(.minutes(1)))
    func aCrashBetweenWriteAndRenameLeavesTheOldValueAndTheLeftoverIsCleanedUp() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let cache: DiskCache<String, String> = try makeCache(folder, clock: clock)
            try await cache.setEntry(CacheEntry(value: "new", storedAt: clock.now), forKey: "k")
            let path = try cache.filePath(forKey: "k")
            let complete = try readBytes(path)
            try await cache.setEntry(CacheEntry(value: "old", storedAt: clock.now), forKey: "k")
            // The crashed write: a complete new file under a temporary name, never renamed; and one cut short.
            let leftover = cache.folder.appending(path: ".tmp-00000000000000aa").path(percentEncoded: false)
            let torn = cache.folder.appending(path: ".tmp-00000000000000bb").path(percentEncoded: false)
            try writeBytes(complete, to: leftover)
            try writeBytes(Array(complete.prefix(20)), to: torn)

            let events = EventLog()
            let restarted: DiskCache<String, String> = try makeCache(folder, clock: clock, events: events)
            #expect(try await restarted.entry(forKey: "k")?.value == "old")
            try await restarted.invalidateEntries { _ in false }
            // A young temporary file may belong to a live writer: the first write keeps it.
            try await restarted.setEntry(CacheEntry(value: "other", storedAt: clock.now), forKey: "other")
            #expect(fileExists(leftover) && fileExists(torn))
            #expect(events.all.isEmpty)

            // Ten minutes later it is a leftover: the next instance's first write removes it.
            try setModificationTime(of: leftover, secondsAgo: 3600)
            try setModificationTime(of: torn, secondsAgo: 3600)
            let later: DiskCache<String, String> = try makeCache(folder, clock: clock, events: events)
            try await later.setEntry(CacheEntry(value: "newer", storedAt: clock.now), forKey: "k")
            #expect(!fileExists(leftover) && !fileExists(torn))
            #expect(Set(events.all) == [.removedTemporaryFile(path: leftover), .removedTemporaryFile(path: torn)])
            #expect(try await later.entry(forKey: "k")?.value == "newer")
        }
    }
}
