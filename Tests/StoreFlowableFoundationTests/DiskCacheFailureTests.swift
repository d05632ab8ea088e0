import Foundation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// File system failures: a folder removed from outside, a folder that cannot be created, a folder
/// that cannot be written, a full disk. Typed errors from writes, misses from reads, never a crash.
@Suite struct DiskCacheFailureTests {
    /// Kingfisher never recreated a cache folder deleted from outside.
    @Test(.timeLimit(.minutes(1)))
    func aFolderRemovedFromOutsideIsRecreatedByTheNextWrite() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let cache: DiskCache<String, String> = try makeCache(folder, clock: clock)
            try await cache.setEntry(CacheEntry(value: "a", storedAt: clock.now), forKey: "a")
            try FileManager.default.removeItem(at: cache.folder)
            #expect(try await cache.entry(forKey: "a") == nil)
            try await cache.invalidateEntries { _ in true }
            try await cache.setEntry(CacheEntry(value: "b", storedAt: clock.now), forKey: "b")
            #expect(try await cache.entry(forKey: "b")?.value == "b")
            // Also when the parent directory went too.
            try FileManager.default.removeItem(at: folder)
            try await cache.setEntry(CacheEntry(value: "c", storedAt: clock.now), forKey: "c")
            #expect(try await cache.entry(forKey: "c")?.value == "c")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aFolderThatCannotBeCreatedGivesATypedErrorOnWriteAndMissesOnRead() async throws {
        try await withTemporaryFolder { folder in
            // The cache's parent is a regular file: its folder cannot be created, even by root.
            let file = folder.appending(path: "a-file")
            try Data("not a folder".utf8).write(to: file)
            let clock = ManualCacheClock()
            let events = EventLog()
            let cache: DiskCache<String, String> = try makeCache(file, clock: clock, events: events)
            await #expect {
                try await cache.setEntry(CacheEntry(value: "v", storedAt: clock.now), forKey: "k")
            } throws: { error in
                guard case .directoryUnavailable(let path, let code) = error as? DiskCacheError else { return false }
                return path == DiskCacheLocation.path(of: cache.folder) && code == ENOTDIR
            }
            #expect(try await cache.entry(forKey: "k") == nil)
            try await cache.removeEntry(forKey: "k")
            try await cache.invalidateEntry(forKey: "k")
            try await cache.invalidateEntries { _ in true }
            try await cache.removeAllEntries()
            #expect(events.all.isEmpty)
        }
    }

    /// A folder the process may read but not write: writes throw `notWritable` and leave no temporary
    /// file, reads still serve what is there. Checked in a child process: as root (which writes
    /// anywhere) the child switches to an unprivileged user first.
    @Test(.timeLimit(.minutes(1)))
    func aReadOnlyFolderRejectsWritesWithATypedErrorAndStillServesReads() async throws {
        _ = try CrashWriterProcess.requireBinary()
        try await withTemporaryFolder { folder in
            let clock = SystemCacheClock()
            let cache: DiskCache<String, String> = try makeCache(folder, name: "ro", clock: clock)
            try await cache.setEntry(CacheEntry(value: "old", storedAt: clock.now), forKey: "k")
            let cachePath = cache.folder.path(percentEncoded: false)
            let nobody: uid_t = 65534
            if geteuid() == 0 {
                for path in [cachePath, try cache.filePath(forKey: "k")] {
                    #expect(chown(path, nobody, gid_t(nobody)) == 0)
                }
                #expect(chmod(folder.path(percentEncoded: false), 0o755) == 0)
            }
            #expect(chmod(cachePath, 0o500) == 0)
            defer { _ = chmod(cachePath, 0o700) }

            let writer = try CrashWriterProcess(["read-only", folder.path(percentEncoded: false), "ro", "\(nobody)"])
            let lines = try await writer.readAllLines()
            #expect(await writer.waitForExit() == 0, "\(lines)")
            #expect(lines.contains("error: notWritable"), "\(lines)")
            #expect(lines.contains("read: old"), "\(lines)")
            #expect(lines.contains("temporaryFiles: 0"), "\(lines)")
        }
    }

    /// Kingfisher crashed on a full disk. The child limits the size of the files it may write
    /// (`RLIMIT_FSIZE`), so its write fails as on a full disk (`EFBIG`, reported like `ENOSPC`).
    @Test(.timeLimit(.minutes(1)))
    func aFullDiskGivesATypedErrorAndKeepsTheOldValue() async throws {
        _ = try CrashWriterProcess.requireBinary()
        try await withTemporaryFolder { folder in
            let writer = try CrashWriterProcess(["disk-full", folder.path(percentEncoded: false), "full"])
            let lines = try await writer.readAllLines()
            #expect(await writer.waitForExit() == 0, "\(lines)")
            #expect(lines.contains("error: diskFull"), "\(lines)")
            #expect(lines.contains("read: small"), "\(lines)")
            #expect(lines.contains("temporaryFiles: 0"), "\(lines)")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anUnreadableFileIsAReportedMiss() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let events = EventLog()
            let cache: DiskCache<String, String> = try makeCache(folder, clock: clock, events: events)
            // A folder where the entry file should be: opening works, reading fails (EISDIR).
            let path = try cache.filePath(forKey: "k")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            #expect(try await cache.entry(forKey: "k") == nil)
            #expect(events.all == [.readFailed(path: path, code: EISDIR)])
        }
    }
}
