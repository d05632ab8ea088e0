import SQLiteNIO
public import StoreFlowable
public import StoreFlowableFoundation
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``KeyedCache`` in a table of an SQLite database file: values survive a restart of the process, and
/// several processes can share the file.
///
/// ```swift
/// let users = try await SQLiteCache<Int, User>.open(
///     name: "users", path: "/var/lib/myapp/cache.sqlite", policy: FreshnessPolicy(freshFor: .seconds(300)))
/// let store = KeyedStore(cache: users) { id in try await api.user(id) }
/// let user = try await store[42].requireData()   // from the file, also after a restart
/// ```
///
/// **Tables.** Each cache name has a table of its own, `storeflowable_cache_<name>`, in the file at `path`
/// (several caches may share one file); its layout is in ``SQLiteCacheTable`` and `Docs/ServerCaches.md`.
/// ``open(name:path:policy:clock:coder:valueFormat:sizeLimit:lockTimeout:events:)`` creates the table when it is
/// missing and checks its layout version (in `storeflowable_schema`) when it is there: another version
/// is ``SQLiteCacheError/schemaMismatch(table:found:expected:)``, never a guess. The file is put in WAL
/// mode (readers never wait for the writer) with `synchronous=NORMAL`.
///
/// **Writes are whole.** Every write is one SQLite statement (an upsert; an in-place update for an
/// invalidation), so a reader, in this process or another, sees the old entry or the new one, and a
/// process killed in the middle of a write leaves the database readable with one of them (SQLite's
/// journal rolls back what was not committed). A write that returned survives a crash of the process; with
/// `synchronous=NORMAL` in WAL mode the last writes before a power loss may be lost, never the file.
///
/// **Reads never serve a wrong value.** An entry written with another ``valueFormat``, or whose value
/// the coder cannot decode, is deleted, reported to `events` as
/// ``SQLiteCacheEvent/removedUnreadableEntry(table:key:problem:)``, and read as a miss; so is an entry
/// past its policy's ``FreshnessPolicy/lifetime`` (by its stored time, which survives restarts). Such
/// deletions are conditional on the row being the one that was read, so they never remove a newer write.
///
/// **Size limit.** With a `sizeLimit`, a write that takes the table's entries (keys and values, as
/// encoded) over it removes the oldest entries (by write order) until the rest fit, never the entry just
/// written; an entry larger than the limit on its own is not stored. The eviction is a second statement:
/// a crash between the two leaves the table over its limit until the next write.
///
/// **Concurrency.** Every method may be called from any task, concurrently. The cache holds one
/// connection; SQLite's calls run on sqlite-nio's thread pool, never on the caller's thread, so callers
/// suspend instead of blocking. Statements on the connection run one at a time.
///
/// **Locks.** SQLite has one writer per file. A statement that finds the file locked by another
/// connection (another process, another instance) waits for it by turns of 100 ms, each on a thread of
/// sqlite-nio's pool, suspending in between so that the pool's threads stay free for other work; after
/// ``lockTimeout`` it throws ``SQLiteCacheError/lockTimedOut(operation:after:)``, and a caller cancelled
/// meanwhile gets ``SQLiteCacheError/cancelled`` within a turn. A process that dies holding the lock
/// releases it with its file locks.
///
/// **Closing.** ``close()`` waits for the calls in progress, refuses new ones with
/// ``SQLiteCacheError/closed``, then closes the connection, also when the task calling it is cancelled. A
/// cache released without it closes its connection in the background.
///
/// **Limits.** Deleting the database file (and its `-wal` and `-shm` files) while a cache has it open is
/// not noticed: writes go on into the deleted file and are lost with it, and a new cache at the path
/// starts empty.
public final class SQLiteCache<Key: Hashable & Sendable & Codable, Value: Sendable & Codable>: KeyedCache {
    /// The cache's name; its table is `storeflowable_cache_` and the name.
    public let name: String
    /// The database file's path.
    public let path: String
    /// How long entries are fresh and usable.
    public let policy: FreshnessPolicy
    /// The time source for expiry.
    public let clock: any CacheClock
    /// The version of the value encoding: entries written with another are read as misses (and deleted).
    public let valueFormat: Int
    /// The most bytes the table's keys and values may take, as encoded, or `nil` for no limit.
    public let sizeLimit: Int?
    /// How long a statement waits for another connection's lock on the file before it throws
    /// ``SQLiteCacheError/lockTimedOut(operation:after:)``.
    public let lockTimeout: Duration

    let table: SQLiteCacheTable
    let connection: SQLiteConnection
    let coder: any DiskCacheCoder<Key, Value>
    let events: (@Sendable (SQLiteCacheEvent) -> Void)?
    /// Whether ``close()`` was called, the calls in progress, and a `close()` waiting for them to end.
    private let lifecycle = Mutex(Lifecycle())

    /// How long SQLite itself waits for another connection's lock in one turn, in milliseconds.
    static var lockPollMilliseconds: Int { 100 }

    private init(
        table: SQLiteCacheTable, path: String, connection: SQLiteConnection, policy: FreshnessPolicy,
        clock: any CacheClock, coder: any DiskCacheCoder<Key, Value>, valueFormat: Int, sizeLimit: Int?,
        lockTimeout: Duration, events: (@Sendable (SQLiteCacheEvent) -> Void)?
    ) {
        self.table = table
        name = table.name
        self.path = path
        self.connection = connection
        self.policy = policy
        self.clock = clock
        self.coder = coder
        self.valueFormat = valueFormat
        self.sizeLimit = sizeLimit.map { max($0, 0) }
        self.lockTimeout = max(lockTimeout, .zero)
        self.events = events
    }

    /// Opens the cache `name` in the database file at `path`, creating the file and the cache's table when
    /// they are missing.
    ///
    /// Open one instance per cache and file and share it; several instances, in this process or others,
    /// may use the same file and table.
    ///
    /// - Parameters:
    ///   - name: The cache's name: a lowercase ASCII letter, then at most 47 lowercase letters, digits and
    ///     underscores. It names the table.
    ///   - path: The database file. `:memory:` opens a private in-memory database.
    ///   - policy: How long entries are fresh and usable; ``FreshnessPolicy/forever`` by default.
    ///   - clock: The time source for expiry; the system's wall clock by default.
    ///   - coder: Encodes keys and values; JSON by default. It must encode equal keys to equal bytes.
    ///   - valueFormat: The version of your value encoding: raise it when `Value` or its encoding changes,
    ///     and entries written before are read as misses instead of failing to decode. 1 by default.
    ///   - sizeLimit: The most bytes the table's keys and values may take, as encoded, or `nil` (the
    ///     default) for no limit.
    ///   - lockTimeout: How long a statement waits for another connection's lock on the file; 5 seconds by
    ///     default.
    ///   - events: Receives unreadable and expired entries removed and evictions; `nil` to ignore them.
    /// - Returns: The open cache.
    /// - Throws: ``SQLiteCacheError/invalidName(_:)``; ``SQLiteCacheError/schemaMismatch(table:found:expected:)``
    ///   or ``SQLiteCacheError/unexpectedTable(_:)`` when the table is not one this version reads;
    ///   ``SQLiteCacheError/databaseFailed(operation:underlying:)`` when the file cannot be opened or
    ///   created, or is not a database; ``SQLiteCacheError/cancelled`` when the calling task is cancelled
    ///   (the connection is then closed).
    public static func open(
        name: String,
        path: String,
        policy: FreshnessPolicy = .forever,
        clock: any CacheClock = SystemCacheClock(),
        coder: any DiskCacheCoder<Key, Value> = JSONDiskCacheCoder<Key, Value>(),
        valueFormat: Int = 1,
        sizeLimit: Int? = nil,
        lockTimeout: Duration = .seconds(5),
        events: (@Sendable (SQLiteCacheEvent) -> Void)? = nil
    ) async throws(SQLiteCacheError) -> SQLiteCache {
        let table = try SQLiteCacheTable(name: name)
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: path == ":memory:" ? .memory : .file(path: path))
        } catch {
            throw SQLiteCacheError(error, operation: "open \(path)")
        }
        do throws(SQLiteCacheError) {
            try await prepare(table, on: connection)
        } catch {
            await closeWhatever(connection)
            throw error
        }
        return SQLiteCache(
            table: table, path: path, connection: connection, policy: policy, clock: clock, coder: coder,
            valueFormat: valueFormat, sizeLimit: sizeLimit, lockTimeout: lockTimeout, events: events)
    }

    deinit {
        // No call is in progress (each holds the cache); the future-based close runs whatever happens.
        if !lifecycle.withLock({ $0.isClosed }) { _ = connection.close() }
    }

    /// Closes the cache's connection, once the calls in progress have ended.
    ///
    /// Calls made from the moment `close()` is called throw ``SQLiteCacheError/closed``. It returns once
    /// the connection is closed (also when the calling task is cancelled: the close is not dropped), and
    /// at once when the cache was closed before.
    public func close() async {
        let mustWait: Bool? = lifecycle.withLock { state in
            guard !state.isClosed else { return nil }
            state.isClosed = true
            return state.callsInProgress > 0
        }
        guard let mustWait else { return }
        if mustWait {
            await withCheckedContinuation { (closer: CheckedContinuation<Void, Never>) in
                let endedMeanwhile = lifecycle.withLock { state in
                    if state.callsInProgress == 0 { return true }
                    state.closers.append(closer)
                    return false
                }
                if endedMeanwhile { closer.resume() }
            }
        }
        await Self.closeWhatever(connection)
    }

    /// Closes `connection` in a task of its own: sqlite-nio drops the close of a cancelled caller, and a
    /// connection released unclosed keeps its file open (and trips sqlite-nio's assertion).
    static func closeWhatever(_ connection: SQLiteConnection) async {
        await Task { try? await connection.close() }.value
    }

    // MARK: KeyedCache

    /// Reads the entry of `key`.
    ///
    /// An entry of another value format, with an undecodable value, or past the policy's lifetime is
    /// deleted (unless a write replaced it meanwhile), reported to `events`, and read as a miss.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry as stored (its value, stored time and invalidation mark), or `nil`.
    /// - Throws: ``SQLiteCacheError/encodingFailed(_:)`` if the coder cannot encode `key`,
    ///   ``SQLiteCacheError/databaseFailed(operation:underlying:)`` when SQLite fails,
    ///   ``SQLiteCacheError/closed``.
    public func entry(forKey key: Key) async throws(SQLiteCacheError) -> CacheEntry<Value>? {
        let keyData = try encodedKey(key)
        let rows = try await query(table.select, [keyData.sqliteData ?? .null], "read an entry")
        guard let row = rows.first else { return nil }
        // By position, in the order of `table.select` (a lookup by name compares strings on every read).
        let columns = row.columns
        guard columns.count == 5, let valueData = Data(sqliteData: columns[0].data),
            let storedAt = columns[1].data.integer, let invalidated = columns[2].data.integer,
            let format = columns[3].data.integer, let seq = columns[4].data.integer
        else {
            try await discard(keyData, seq: row.column("seq")?.integer, problem: .malformedRow)
            return nil
        }
        guard format == valueFormat else {
            try await discard(keyData, seq: seq, problem: .otherValueFormat(found: Int(format)))
            return nil
        }
        let stored = CacheTime(nanosecondsSince1970: Int64(storedAt))
        if policy.isPastLifetime(storedAt: stored, now: clock.now) {
            let deleted = try await query(
                table.deleteIfUnchanged, [keyData.sqliteData ?? .null, .integer(seq)], "delete an expired entry")
            if !deleted.isEmpty { events?(.removedExpiredEntry(table: table.table, key: Self.describe(keyData))) }
            return nil
        }
        let value: Value
        do {
            value = try coder.decodeValue(from: valueData)
        } catch {
            try await discard(keyData, seq: seq, problem: .undecodableValue(reason: "\(error)"))
            return nil
        }
        return CacheEntry(value: value, storedAt: stored, isInvalidated: invalidated != 0)
    }

    /// Stores `entry` under `key` in one statement, replacing any previous entry; with a size limit, the
    /// oldest entries may then be evicted.
    ///
    /// - Parameters:
    ///   - entry: The entry; its `storedAt` (to the nanosecond) and invalidation mark are stored with it.
    ///   - key: Its key.
    /// - Throws: ``SQLiteCacheError/encodingFailed(_:)``, ``SQLiteCacheError/entryTooLarge(bytes:sizeLimit:)``
    ///   (the key's previous entry is then removed), ``SQLiteCacheError/databaseFailed(operation:underlying:)``
    ///   (the previous entry is then unchanged), ``SQLiteCacheError/closed``.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws(SQLiteCacheError) {
        let keyData = try encodedKey(key)
        let valueData: Data
        do {
            valueData = try coder.encodeValue(entry.value)
        } catch {
            throw .encodingFailed(error)
        }
        let size = keyData.count + valueData.count
        if let sizeLimit, size > sizeLimit {
            _ = try await query(table.delete, [keyData.sqliteData ?? .null], "remove an entry")
            throw .entryTooLarge(bytes: size, sizeLimit: sizeLimit)
        }
        let binds: [SQLiteData] = [
            keyData.sqliteData ?? .null, valueData.sqliteData ?? .null,
            .integer(SQLiteInt64(entry.storedAt.nanosecondsSince1970)), .integer(entry.isInvalidated ? 1 : 0),
            .integer(SQLiteInt64(valueFormat)), .integer(SQLiteInt64(size)),
        ]
        _ = try await query(table.upsert, binds, "write an entry")
        if let sizeLimit {
            let evicted = try await query(
                table.evict, [.integer(SQLiteInt64(sizeLimit)), keyData.sqliteData ?? .null], "evict entries")
            if !evicted.isEmpty {
                let bytes = evicted.reduce(0) { $0 + Int($1.column("size")?.integer ?? 0) }
                events?(.evicted(table: table.table, count: evicted.count, bytes: bytes))
            }
        }
    }

    /// Deletes the entry of `key`, if any.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: ``SQLiteCacheError/encodingFailed(_:)``, ``SQLiteCacheError/databaseFailed(operation:underlying:)``,
    ///   ``SQLiteCacheError/closed``.
    public func removeEntry(forKey key: Key) async throws(SQLiteCacheError) {
        _ = try await query(table.delete, [encodedKey(key).sqliteData ?? .null], "remove an entry")
    }

    /// Marks the entry of `key`, if any, as invalidated, in place (one statement), keeping its value and
    /// stored time.
    ///
    /// - Parameter key: The key to invalidate.
    /// - Throws: ``SQLiteCacheError/encodingFailed(_:)``, ``SQLiteCacheError/databaseFailed(operation:underlying:)``,
    ///   ``SQLiteCacheError/closed``.
    public func invalidateEntry(forKey key: Key) async throws(SQLiteCacheError) {
        _ = try await query(table.invalidate, [encodedKey(key).sqliteData ?? .null], "invalidate an entry")
    }

    /// Marks every entry whose key satisfies `isIncluded` as invalidated.
    ///
    /// The keys not yet invalidated are listed and decoded; `isIncluded` runs with no statement running;
    /// then each chosen entry is marked, unless a write replaced it since it was listed (a newer value is
    /// not invalidated by an older decision). A key the coder cannot decode is deleted and reported.
    ///
    /// - Parameter isIncluded: Chooses the keys to invalidate; called once per entry not yet invalidated.
    /// - Throws: ``SQLiteCacheError/databaseFailed(operation:underlying:)``, ``SQLiteCacheError/closed``.
    public func invalidateEntries(where isIncluded: @escaping @Sendable (Key) -> Bool) async throws(SQLiteCacheError) {
        let rows = try await query(table.listValid, [], "list entries")
        var chosen: [(key: Data, seq: SQLiteInt64)] = []
        for row in rows {
            guard let keyData = row.column("key").flatMap(Data.init(sqliteData:)),
                let seq = row.column("seq")?.integer
            else { continue }
            let key: Key
            do {
                key = try coder.decodeKey(from: keyData)
            } catch {
                try await discard(keyData, seq: seq, problem: .undecodableKey(reason: "\(error)"))
                continue
            }
            if isIncluded(key) { chosen.append((keyData, seq)) }
        }
        for (keyData, seq) in chosen {
            _ = try await query(
                table.invalidateIfUnchanged, [keyData.sqliteData ?? .null, .integer(seq)], "invalidate an entry")
        }
    }

    /// Deletes every entry of the cache's table (other caches in the file are untouched).
    ///
    /// - Throws: ``SQLiteCacheError/databaseFailed(operation:underlying:)``, ``SQLiteCacheError/closed``.
    public func removeAllEntries() async throws(SQLiteCacheError) {
        _ = try await query(table.deleteAll, [], "remove every entry")
    }

    // MARK: Helpers

    /// The coder's encoding of `key`.
    private func encodedKey(_ key: Key) throws(SQLiteCacheError) -> Data {
        do {
            return try coder.encodeKey(key)
        } catch {
            throw .encodingFailed(error)
        }
    }

    /// Runs one statement and returns its rows, as a call in progress (``close()`` waits for it), waiting
    /// for another connection's lock by turns until ``lockTimeout``.
    func query(_ sql: String, _ binds: [SQLiteData], _ operation: String) async throws(SQLiteCacheError)
        -> [SQLiteRow]
    {
        let admitted = lifecycle.withLock { state in
            guard !state.isClosed else { return false }
            state.callsInProgress += 1
            return true
        }
        guard admitted else { throw .closed }
        defer {
            let closers = lifecycle.withLock { state in
                state.callsInProgress -= 1
                guard state.callsInProgress == 0 else { return [CheckedContinuation<Void, Never>]() }
                defer { state.closers = [] }
                return state.closers
            }
            for closer in closers { closer.resume() }
        }
        var deadline: ContinuousClock.Instant?
        while true {
            do {
                return try await connection.query(sql, binds)
            } catch {
                let failure = SQLiteCacheError(error, operation: operation)
                guard failure.isBusy else { throw failure }
                // Another connection holds the lock, and SQLite waited one turn for it: another turn,
                // unless the caller left or the deadline passed. The yield lets other work have the
                // pool's thread between turns.
                let end = deadline ?? ContinuousClock.now + lockTimeout
                deadline = end
                if Task.isCancelled { throw .cancelled }
                if ContinuousClock.now >= end { throw .lockTimedOut(operation: operation, after: lockTimeout) }
                await Task.yield()
            }
        }
    }

    /// Deletes the row of `keyData` if it is still the one read (`seq`), and reports `problem` if it was.
    private func discard(_ keyData: Data, seq: SQLiteInt64?, problem: SQLiteCacheEntryProblem)
        async throws(SQLiteCacheError)
    {
        let deleted: Bool
        if let seq {
            deleted = try await !query(
                table.deleteIfUnchanged, [keyData.sqliteData ?? .null, .integer(seq)], "delete an unreadable entry"
            ).isEmpty
        } else {
            _ = try await query(table.delete, [keyData.sqliteData ?? .null], "delete an unreadable entry")
            deleted = true
        }
        if deleted {
            events?(.removedUnreadableEntry(table: table.table, key: Self.describe(keyData), problem: problem))
        }
    }

    /// An encoded key as text, for events.
    static func describe(_ keyData: Data) -> String {
        String(decoding: keyData, as: UTF8.self)
    }

    /// The state ``lifecycle`` guards.
    private struct Lifecycle {
        var isClosed = false
        var callsInProgress = 0
        var closers: [CheckedContinuation<Void, Never>] = []
    }
}
