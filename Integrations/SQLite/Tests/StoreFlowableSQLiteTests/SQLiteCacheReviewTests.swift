import Foundation
import NIOCore
import SQLiteNIO
import StoreFlowable
import StoreFlowableFoundation
import Testing

@testable import StoreFlowableSQLite

/// Review of the SQLite cache: each test states a documented promise; the ones that fail show a problem.
@Suite("SQLiteCache review", .timeLimit(.minutes(1)))
struct SQLiteCacheReviewTests {
    // MARK: seq is reused after a deletion, so "unless a write replaced it" does not hold

    /// `seq` is `max(seq) + 1`: once the key holding the highest seq is removed, the next write gets that
    /// seq again. A predicate's decision made before a remove-and-write must not mark the new write (the
    /// same promise as `invalidatingByPredicateLeavesAnEntryRewrittenMeanwhile`).
    @Test func invalidatingByPredicateLeavesAnEntryRemovedAndWrittenAgainMeanwhile() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let cache = try await SQLiteCache<Int, Profile>.open(name: "profiles", path: path)
            let other = try await SyncConnection(path: path)
            try await cache.setEntry(CacheEntry(value: Profile(id: 1, name: "old"), storedAt: preciseTime), forKey: 1)
            try await cache.invalidateEntries { key in
                // Between the listing and the marking another process removes the key and writes it again.
                #expect(throws: Never.self) {
                    try other.removeAndWrite(cache, key: 1, value: Profile(id: 1, name: "new"), storedAt: preciseTime)
                }
                return true
            }
            #expect(
                try await cache.entry(forKey: 1)
                    == CacheEntry(value: Profile(id: 1, name: "new"), storedAt: preciseTime),
                "the new write was marked by a decision taken before it")
            await cache.close()
            try await other.close()
        }
    }

    /// The same reuse on the read path: an expired row is read, then (before its conditional delete) the
    /// key is removed and written again, fresh, by another process; the delete must leave the fresh write.
    @Test func anExpiredReadLeavesAnEntryRemovedAndWrittenAgainMeanwhile() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let clock = HookedClock(preciseTime)
            let policy = FreshnessPolicy(freshFor: .seconds(60), maxAge: .seconds(120))
            let cache = try await SQLiteCache<Int, Profile>.open(
                name: "profiles", path: path, policy: policy, clock: clock)
            let other = try await SyncConnection(path: path)
            let old = preciseTime.advanced(by: .seconds(-3600))
            try await cache.setEntry(CacheEntry(value: Profile(id: 1, name: "old"), storedAt: old), forKey: 1)
            clock.arm {
                #expect(throws: Never.self) {
                    try other.removeAndWrite(cache, key: 1, value: Profile(id: 1, name: "fresh"), storedAt: preciseTime)
                }
            }
            _ = try await cache.entry(forKey: 1)  // reads the old row, expired; the fresh write lands meanwhile
            #expect(
                try await cache.entry(forKey: 1)?.value.name == "fresh",
                "the delete of the expired row removed the newer, fresh write")
            await cache.close()
            try await other.close()
        }
    }

    /// `removedExpiredEntry` says the entry "was deleted", but it is sent whether or not the conditional
    /// delete removed anything: here a newer write (a higher seq) replaced the row between the read and
    /// the delete, nothing was deleted, and the event is still sent.
    @Test func anExpiredEntryReplacedMeanwhileIsNotReportedAsRemoved() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let clock = HookedClock(preciseTime)
            let events = SQLiteEventLog()
            let cache = try await SQLiteCache<Int, Profile>.open(
                name: "profiles", path: path, policy: FreshnessPolicy(freshFor: .seconds(60)), clock: clock,
                events: events.handler)
            let other = try await SyncConnection(path: path)
            try await cache.setEntry(
                CacheEntry(value: Profile(id: 1, name: "old"), storedAt: preciseTime.advanced(by: .seconds(-3600))),
                forKey: 1)
            try await cache.setEntry(CacheEntry(value: Profile(id: 2, name: "other"), storedAt: preciseTime), forKey: 2)
            clock.arm {
                #expect(throws: Never.self) {
                    // An upsert without a removal: the row gets a new, higher seq.
                    let key = try cache.coder.encodeKey(1)
                    let value = try cache.coder.encodeValue(Profile(id: 1, name: "fresh"))
                    try other.run(
                        cache.table.upsert,
                        [
                            (key.sqliteData ?? .null), (value.sqliteData ?? .null),
                            .integer(Int(preciseTime.nanosecondsSince1970)),
                            .integer(0), .integer(1), .integer(key.count + value.count),
                        ])
                }
            }
            #expect(try await cache.entry(forKey: 1) == nil)
            #expect(try await cache.entry(forKey: 1)?.value.name == "fresh", "the fresh write is there")
            #expect(events.all.isEmpty, "reported as removed though nothing was: \(events.all)")
            await cache.close()
            try await other.close()
        }
    }

    // MARK: A file deleted while open

    /// The file (and its -wal and -shm) deleted while a cache has it open (a cleaner of a cache folder):
    /// the cache goes on writing into the unlinked file without an error, and a write that returned is
    /// seen by no one else: a new instance at the same path reads a miss. (SQLite's "how to corrupt"
    /// page lists this case; `SQLITE_FCNTL_HAS_MOVED` tells it.)
    @Test func aWriteAfterTheFileWasDeletedFailsOrIsSeenByANewInstance() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let cache = try await SQLiteCache<Int, Int>.open(name: "numbers", path: path)
            try await cache.setEntry(CacheEntry(value: 1, storedAt: preciseTime), forKey: 1)
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            let wrote: Bool
            do {
                try await cache.setEntry(CacheEntry(value: 2, storedAt: preciseTime), forKey: 2)
                wrote = true
            } catch {
                wrote = false
            }
            if wrote {
                let fresh = try await SQLiteCache<Int, Int>.open(name: "numbers", path: path)
                let seen = try await fresh.entry(forKey: 2)?.value
                // A documented limit of SQLiteCache ("Limits" in its documentation, Docs/ServerCaches.md):
                // the test stays, so that it tells when a fix lands.
                withKnownIssue("a file deleted while open is not noticed (documented limit)") {
                    #expect(
                        seen == 2,
                        "a write that returned after the file was deleted is lost: a new instance at the path misses it"
                    )
                }
                await fresh.close()
            }
            await cache.close()
        }
    }

    // MARK: Table names

    /// Valid names `x` and `x_seq`: the index of `x` is named `storeflowable_cache_x_seq`, the table of
    /// `x_seq` too (tables and indexes share SQLite's namespace), so the two caches cannot share a file.
    @Test(arguments: [["pages", "pages_seq"], ["pages_seq", "pages"]])
    func cachesNamedXAndXSeqShareAFile(names: [String]) async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            var opened: [SQLiteCache<Int, Int>] = []
            for name in names {
                do {
                    opened.append(try await SQLiteCache<Int, Int>.open(name: name, path: path))
                } catch {
                    Issue.record("opening \(name) after \(opened.map(\.name)) failed: \(error)")
                }
            }
            for cache in opened { await cache.close() }
        }
    }

    // MARK: Waiting for another process's lock
    //
    // Each runs in a child process of its own: the waits take the process's NIOThreadPool.singleton, and
    // would stall every other test of the run meanwhile.

    /// sqlite-nio installs a busy handler that always answers "retry" (and retries at once, without
    /// sleeping); the cache sets no busy timeout. A write while another process holds the write lock
    /// (a long transaction, a process stopped in a debugger, `sqlite3` left in `BEGIN`) then waits for
    /// ever, spinning a thread of sqlite-nio's pool, instead of failing as `databaseFailed` (busy).
    @Test func aWriteWhileAnotherProcessHoldsTheLockEnds() async throws {
        expectChildPasses(try await runChildTest("childWriteWhileAnotherProcessHoldsTheLock"))
    }

    @Test(.enabled(if: isChild("childWriteWhileAnotherProcessHoldsTheLock")))
    func childWriteWhileAnotherProcessHoldsTheLock() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let cache = try await SQLiteCache<Int, Int>.open(name: "numbers", path: path)
            try await withPrivateConnection(to: path) { holder in
                _ = try await holder.query("BEGIN IMMEDIATE")
                let (ended, write) = await endsWithin(.seconds(20)) {
                    _ = try? await cache.setEntry(CacheEntry(value: 1, storedAt: preciseTime), forKey: 1)
                }
                #expect(ended, "the write waited 20 s for the lock and was still waiting")
                _ = try await holder.query("ROLLBACK")
                await write.value
            }
            await cache.close()
        }
    }

    /// The same wait ignores cancellation: a caller cancelled once its statement runs (it has not ended
    /// after a second) stays suspended until the lock is released. (A caller cancelled before its
    /// statement starts gets `databaseFailed` wrapping `CancellationError`: sqlite-nio drops queued work.)
    @Test func aCancelledWriteWaitingForTheLockReturns() async throws {
        expectChildPasses(try await runChildTest("childCancelledWriteWaitingForTheLock"))
    }

    @Test(.enabled(if: isChild("childCancelledWriteWaitingForTheLock")))
    func childCancelledWriteWaitingForTheLock() async throws {
        try await withTemporaryFolder { folder in
            let path = databasePath(in: folder)
            let cache = try await SQLiteCache<Int, Int>.open(name: "numbers", path: path)
            try await withPrivateConnection(to: path) { holder in
                _ = try await holder.query("BEGIN IMMEDIATE")
                let caller = Task { try await cache.setEntry(CacheEntry(value: 1, storedAt: preciseTime), forKey: 1) }
                let (endedAtOnce, _) = await endsWithin(.seconds(1)) { _ = await caller.result }
                if !endedAtOnce {
                    caller.cancel()
                    let (ended, waiter) = await endsWithin(.seconds(5)) { _ = await caller.result }
                    #expect(ended, "a write cancelled while waiting for the lock still waited 5 s later")
                    _ = try await holder.query("ROLLBACK")
                    await waiter.value
                } else {
                    _ = try await holder.query("ROLLBACK")
                }
            }
            await cache.close()
        }
    }

    /// The waits take sqlite-nio's shared thread pool (`NIOThreadPool.singleton`, one thread per core):
    /// as many writes waiting for one file's lock as the pool has threads, and a read of another cache
    /// in another file, locked by no one, never runs: every SQLite cache of the process (and anything
    /// else on that pool) hangs.
    @Test func writesWaitingForOneFilesLockDoNotStallACacheOfAnotherFile() async throws {
        expectChildPasses(try await runChildTest("childWritesWaitingForOneFilesLock"))
    }

    @Test(.enabled(if: isChild("childWritesWaitingForOneFilesLock")))
    func childWritesWaitingForOneFilesLock() async throws {
        try await withTemporaryFolder { folder in
            let lockedPath = databasePath(in: folder, "locked.sqlite")
            let locked = try await SQLiteCache<Int, Int>.open(name: "numbers", path: lockedPath)
            let free = try await SQLiteCache<Int, Int>.open(
                name: "numbers", path: databasePath(in: folder, "free.sqlite"))
            try await free.setEntry(CacheEntry(value: 7, storedAt: preciseTime), forKey: 7)
            try await withPrivateConnection(to: lockedPath) { holder in
                _ = try await holder.query("BEGIN IMMEDIATE")
                var writes: [Task<Void, Never>] = []
                for key in 0..<NIOSingletons.blockingPoolThreadCountSuggestion {
                    writes.append(
                        Task {
                            _ = try? await locked.setEntry(CacheEntry(value: key, storedAt: preciseTime), forKey: key)
                        })
                }
                let (ended, read) = await endsWithin(.seconds(10)) {
                    #expect((try? await free.entry(forKey: 7))??.value == 7)
                }
                #expect(ended, "a read of an unlocked file was stuck for 10 s behind writes waiting for another file")
                _ = try await holder.query("ROLLBACK")
                for write in writes { await write.value }
                await read.value
            }
            await locked.close()
            await free.close()
        }
    }

    // MARK: close()

    /// `close()` while calls are running: sqlite-nio calls `sqlite3_close` (not `_v2`), which refuses
    /// with SQLITE_BUSY while another thread has a statement open and leaves the connection open; the
    /// handle is forgotten, so the file's descriptors (and its locks, and the -wal file) stay open for the
    /// life of the process.
    @Test func closingWhileCallsRunReleasesTheFile() async throws {
        #if os(Linux)
            try await withTemporaryFolder { folder in
                // The control: closed with no call running, the file is released.
                let quiet = try await SQLiteCache<Int, [Int]>.open(name: "lists", path: databasePath(in: folder))
                try await quiet.setEntry(CacheEntry(value: [1], storedAt: preciseTime), forKey: 1)
                _ = try await quiet.entry(forKey: 1)
                await quiet.close()
                #expect(openDescriptors(on: databasePath(in: folder)) == 0)
                for round in 0..<40 {
                    let path = databasePath(in: folder, "round\(round).sqlite")
                    let cache = try await SQLiteCache<Int, [Int]>.open(name: "lists", path: path)
                    // 5,000 rows, so that listing them (invalidateEntries) keeps a statement open a while.
                    _ = try await cache.connection.query(
                        """
                        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
                        INSERT INTO storeflowable_cache_lists
                        SELECT CAST(CAST(i AS TEXT) AS BLOB), CAST('[]' AS BLOB), 0, 0, 1, 3, i FROM n
                        """)
                    try #require(openDescriptors(on: path) ?? 0 > 0)
                    let readers = (0..<4).map { _ in
                        Task {
                            for _ in 0..<5 { _ = try? await cache.invalidateEntries { _ in false } }
                        }
                    }
                    await Task.yield()
                    await cache.close()
                    for reader in readers { await reader.value }
                    let open = openDescriptors(on: path) ?? 0
                    #expect(open == 0, "round \(round): \(open) descriptors still open on the file after close()")
                    if open != 0 { return }
                }
            }
        #endif
    }

    /// `close()` from a task that is cancelled (a shutdown path in a cancelled task group): sqlite-nio's
    /// async `close()` is dropped unrun when the task is cancelled (`runIfActive` fails with
    /// `CancellationError` before starting), the cache ignores the error and has already marked itself
    /// closed, so neither `close()` nor `deinit` ever closes the connection. (The cache is kept alive
    /// here: releasing it crashes, see the next test.)
    @Test func closeCalledFromACancelledTaskClosesTheFile() async throws {
        #if os(Linux)
            try await withTemporaryFolder { folder in
                let path = databasePath(in: folder)
                let cache = try await SQLiteCache<Int, Int>.open(name: "numbers", path: path)
                keptForever.withLock { $0.append(cache) }
                try await cache.setEntry(CacheEntry(value: 1, storedAt: preciseTime), forKey: 1)
                let closer = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    await cache.close()
                }
                await closer.value
                await #expect(throws: SQLiteCacheError.self) { _ = try await cache.entry(forKey: 1) }
                #expect(openDescriptors(on: path) == 0, "the connection is still open after close()")
            }
        #endif
    }

    /// The same, then the cache is released: its `deinit` skips the close (it is marked closed) and
    /// sqlite-nio's `SQLiteConnection.deinit` asserts "SQLiteConnection was not closed before
    /// deinitializing": a debug build crashes (SIGILL). Run in a child process.
    @Test func releasingACacheClosedFromACancelledTaskDoesNotCrash() async throws {
        expectChildPasses(try await runChildTest("childReleasesACacheClosedFromACancelledTask"))
    }

    @Test(.enabled(if: isChild("childReleasesACacheClosedFromACancelledTask")))
    func childReleasesACacheClosedFromACancelledTask() async throws {
        try await withTemporaryFolder { folder in
            var cache: SQLiteCache<Int, Int>? = try await SQLiteCache<Int, Int>.open(
                name: "numbers", path: databasePath(in: folder))
            let closer = Task { [cache] in
                withUnsafeCurrentTask { $0?.cancel() }
                await cache?.close()
            }
            await closer.value
            cache = nil
        }
    }

    /// `open` from a task cancelled while the table is being prepared: a statement of the preparation is
    /// dropped (CancellationError), and so are the `ROLLBACK` and the `close()` that follow: the
    /// unclosed connection is released, which crashes a debug build (the assertion above) and leaks the
    /// connection in a release build, possibly inside the preparation's `BEGIN IMMEDIATE` (holding the
    /// file's write lock for the life of the process). Cancelled at varying points, 100 rounds, in a
    /// child process.
    @Test func openingFromACancelledTaskNeitherCrashesNorLeaks() async throws {
        expectChildPasses(try await runChildTest("childOpensFromCancelledTasks"))
    }

    @Test(.enabled(if: isChild("childOpensFromCancelledTasks")))
    func childOpensFromCancelledTasks() async throws {
        #if os(Linux)
            try await withTemporaryFolder { folder in
                for round in 0..<100 {
                    let path = databasePath(in: folder, "round\(round).sqlite")
                    let opener = Task { try await SQLiteCache<Int, Int>.open(name: "numbers", path: path) }
                    for _ in 0..<(round % 25) { await Task.yield() }
                    opener.cancel()
                    if let cache = try? await opener.value { await cache.close() }
                    let open = openDescriptors(on: path) ?? 0
                    #expect(open == 0, "round \(round): \(open) descriptors left open by a cancelled open")
                    if open != 0 { return }
                }
            }
        #endif
    }

    // MARK: Values and keys

    /// A coder may encode a value to no bytes (an empty `Data` with a pass-through coder): sqlite-nio
    /// binds an empty buffer as NULL (no base address), which `value BLOB NOT NULL` refuses.
    @Test func anEmptyEncodedValueIsStored() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<String, Data>.open(
                name: "blobs", path: databasePath(in: folder), coder: RawDataCoder())
            do {
                try await cache.setEntry(CacheEntry(value: Data(), storedAt: preciseTime), forKey: "empty")
                #expect(try await cache.entry(forKey: "empty")?.value == Data())
            } catch {
                Issue.record("an empty value could not be stored: \(error)")
            }
            await cache.close()
        }
    }

    /// The same for a key encoded to no bytes (the empty string with a pass-through coder).
    @Test func anEmptyEncodedKeyIsStored() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<String, Data>.open(
                name: "blobs", path: databasePath(in: folder), coder: RawDataCoder())
            do {
                try await cache.setEntry(CacheEntry(value: Data([1]), storedAt: preciseTime), forKey: "")
                #expect(try await cache.entry(forKey: "")?.value == Data([1]))
            } catch {
                Issue.record("an empty key could not be stored: \(error)")
            }
            await cache.close()
        }
    }

    // MARK: Checked and fine

    @Test func extremeStoredTimesComeBackExactly() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, Int>.open(name: "numbers", path: databasePath(in: folder))
            try await cache.setEntry(CacheEntry(value: 1, storedAt: .distantPast), forKey: 1)
            try await cache.setEntry(CacheEntry(value: 2, storedAt: .distantFuture, isInvalidated: true), forKey: 2)
            #expect(try await cache.entry(forKey: 1) == CacheEntry(value: 1, storedAt: .distantPast))
            #expect(
                try await cache.entry(forKey: 2) == CacheEntry(value: 2, storedAt: .distantFuture, isInvalidated: true))
            await cache.close()
            let expiring = try await SQLiteCache<Int, Int>.open(
                name: "numbers", path: databasePath(in: folder), policy: FreshnessPolicy(freshFor: .seconds(1)))
            #expect(try await expiring.entry(forKey: 1) == nil)
            #expect(try await expiring.entry(forKey: 2)?.value == 2)
            await expiring.close()
        }
    }

    @Test func keysWithQuotesAndSQLAreKeysLikeOthers() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<String, String>.open(name: "texts", path: databasePath(in: folder))
            let keys = ["", "\"", "'", "a\"b'c", "'); DROP TABLE storeflowable_schema; --", "\u{0}", "é"]
            for (index, key) in keys.enumerated() {
                try await cache.setEntry(CacheEntry(value: "v\(index)", storedAt: preciseTime), forKey: key)
            }
            for (index, key) in keys.enumerated() {
                #expect(try await cache.entry(forKey: key)?.value == "v\(index)", "key \(key.debugDescription)")
            }
            try await cache.invalidateEntries { $0.contains("'") }
            for key in keys {
                #expect(try await cache.entry(forKey: key)?.isInvalidated == key.contains("'"))
            }
            await cache.close()
        }
    }

    @Test func aMemoryCacheWorksAndIsPrivate() async throws {
        let first = try await SQLiteCache<Int, Int>.open(name: "numbers", path: ":memory:", sizeLimit: 100)
        let second = try await SQLiteCache<Int, Int>.open(name: "numbers", path: ":memory:")
        try await first.setEntry(CacheEntry(value: 1, storedAt: preciseTime), forKey: 1)
        #expect(try await first.entry(forKey: 1)?.value == 1)
        #expect(try await second.entry(forKey: 1) == nil)
        await first.close()
        await second.close()
    }

    @Test func aPathUnderARegularFileIsATypedError() async throws {
        try await withTemporaryFolder { folder in
            let file = databasePath(in: folder, "plain")
            try Data("x".utf8).write(to: URL(filePath: file))
            await #expect {
                _ = try await SQLiteCache<Int, Int>.open(name: "numbers", path: file + "/cache.sqlite")
            } throws: { error in
                guard case SQLiteCacheError.databaseFailed = error else { return false }
                return true
            }
        }
    }

    /// A connection that may not write (here `PRAGMA query_only`): writes are typed errors and leave the
    /// previous entry; reads still answer.
    @Test func aReadOnlyConnectionFailsWritesAndKeepsThePreviousEntry() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, Int>.open(name: "numbers", path: databasePath(in: folder))
            try await cache.setEntry(CacheEntry(value: 1, storedAt: preciseTime), forKey: 1)
            _ = try await cache.connection.query("PRAGMA query_only = 1")
            await #expect {
                try await cache.setEntry(CacheEntry(value: 2, storedAt: preciseTime), forKey: 1)
            } throws: { error in
                guard case SQLiteCacheError.databaseFailed = error else { return false }
                return true
            }
            #expect(try await cache.entry(forKey: 1)?.value == 1)
            await cache.close()
        }
    }

    /// Callers cancelled while their statements run: every call finishes or throws, and the cache
    /// answers afterwards.
    @Test func cancelledCallersLeaveTheCacheUsable() async throws {
        try await withTemporaryFolder { folder in
            let cache = try await SQLiteCache<Int, [Int]>.open(
                name: "lists", path: databasePath(in: folder), sizeLimit: 50_000)
            let callers = (0..<200).map { index in
                Task {
                    if index % 2 == 0 {
                        try await cache.setEntry(
                            CacheEntry(value: Array(repeating: index, count: 100), storedAt: preciseTime),
                            forKey: index % 10)
                    } else {
                        _ = try await cache.entry(forKey: index % 10)
                    }
                }
            }
            for caller in callers { caller.cancel() }
            for caller in callers { _ = await caller.result }
            try await cache.setEntry(CacheEntry(value: [1], storedAt: preciseTime), forKey: 1)
            #expect(try await cache.entry(forKey: 1)?.value == [1])
            await cache.close()
        }
    }
}
