public import StoreFlowable

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A ``KeyedCache`` that keeps each entry in a file of its own, in a named folder: values survive a
/// restart of the process, and several processes can share the folder.
///
/// ```swift
/// let users = try DiskCache<Int, User>(name: "users", policy: FreshnessPolicy(freshFor: .seconds(300)))
/// try await users.setEntry(CacheEntry(value: user, storedAt: users.clock.now), forKey: user.id)
/// let cached = try await users.entry(forKey: user.id)   // also after a restart
/// ```
///
/// **Files.** The cache lives in the folder ``folder``: `directory/name`, by default inside the
/// platform's caches directory (see ``init(name:directory:policy:clock:coder:durability:sizeLimit:events:)``).
/// Each key's entry is one file named after the 64-bit FNV-1a hash of the encoded key (16 hex digits
/// and `.entry`). The file holds a header (magic bytes, format version, a checksum of the rest, when the
/// entry was stored, the invalidation flag), the whole encoded key, then the encoded value. Keys and
/// values are encoded by the ``DiskCacheCoder`` you pass (JSON by default). Other files in the folder
/// are left alone.
///
/// **Writes are atomic.** Every write encodes the entry, writes it to a new temporary file
/// (`.tmp-` and random hex digits) in the same folder and renames it over the entry's file. A reader,
/// in this process or another, sees the old entry or the new one, never a part of one, and a process
/// killed in the middle of a write leaves the old entry. Concurrent writers of one key end with one of
/// their values, complete. With ``DiskCacheDurability/durable`` the file and the folder are also flushed
/// to the device, so that a write that returned survives a power loss. Temporary files left by a killed
/// writer are never read; the first write of each instance removes those older than ten minutes, as does
/// ``removeAllEntries()`` and every size-limit sweep.
///
/// **Reads never serve a wrong value.** A file that is truncated, has a bit changed (the checksum does
/// not match), has another format version, holds another key (a hash collision) or a value the coder
/// cannot decode is reported to `events` as ``DiskCacheEvent/removedDamagedFile(path:problem:)``,
/// deleted, and read as a miss. An entry past its policy's ``FreshnessPolicy/lifetime`` (by its stored
/// time, which survives restarts) is deleted and read as a miss, never returned. A folder or file that
/// cannot be read is a miss (reported as ``DiskCacheEvent/readFailed(path:code:)``); reads never throw
/// for a file system problem.
///
/// **Writes report failures.** ``setEntry(_:forKey:)`` recreates the folder if it was removed from
/// outside, and throws a ``DiskCacheError`` when it cannot write: ``DiskCacheError/diskFull(path:code:)``,
/// ``DiskCacheError/notWritable(path:code:)``, ``DiskCacheError/directoryUnavailable(path:code:)``, …
/// The previous entry of the key is then unchanged, and no temporary file is left.
///
/// **Size limit.** With a `sizeLimit`, a write that takes the folder's entry files over it removes the
/// least recently used entries (a read counts as a use) until they fill at most 90% of it, never the
/// entry just written. Recency is kept in memory and in each file's modification time, which reads
/// update, so it survives restarts and is shared by processes; the folder is listed again before each
/// sweep, so that files of other processes count.
///
/// **Concurrency.** Every method may be called from any task, concurrently. File input and output are
/// synchronous system calls made by the calling task; no lock is held across them. The operations
/// that change one entry's file (write, removal, invalidation, cleanup) take that file's *turn* in this
/// process: they run one after the other, while other keys go on, and a waiting task suspends instead
/// of blocking a thread. Instances on the same folder path share their turns. Between processes, the
/// files are the source of truth and each write is atomic; an invalidation or a cleanup that races a
/// write of the same key in another process may, within a window of one system call, undo that write:
/// the key then reads as a miss, or as its previous value marked invalidated, which stores never serve
/// without a fetch.
///
/// **Events.** `events` receives what the cache handled on its own (see ``DiskCacheEvent``); it is
/// called after every lock and turn was released, on the task that noticed the event.
public final class DiskCache<Key: Hashable & Sendable & Codable, Value: Sendable & Codable>: KeyedCache {
    /// The cache's name: the last component of ``folder``.
    public let name: String
    /// The folder holding the cache's files.
    public let folder: URL
    /// How long entries stay fresh and usable. Entries past its ``FreshnessPolicy/lifetime`` are deleted
    /// when found.
    public let policy: FreshnessPolicy
    /// The time source of expiry decisions. Entries keep the time they were stored with (`storedAt`).
    public let clock: any CacheClock
    /// How far writes go before they return.
    public let durability: DiskCacheDurability
    /// The most bytes the entry files may take (headers included), or `nil` for no limit.
    public let sizeLimit: Int?

    /// ``folder`` as a file system path, without a trailing slash.
    let folderPath: String
    /// Encodes and decodes keys and values.
    let coder: any DiskCacheCoder<Key, Value>
    /// Receives the events, outside every lock and turn.
    let events: (@Sendable (DiskCacheEvent) -> Void)?
    /// Names entry files: a hash of the encoded key.
    let keyHash: @Sendable (Data) -> UInt64
    /// One turn at a time per entry file, shared with other instances on the same folder path.
    let turns: FileTurns
    /// Whether the folder was opened, the size-limit index, and whether a sweep is running.
    let state = LockedValue(DiskCacheState())

    /// Creates a cache in the folder `directory/name`, reading any entries already there.
    ///
    /// Nothing is read or created on disk here: the folder is created by the first write, and entries
    /// are read when asked for. Create one instance per folder and share it; several instances (or
    /// processes) on one folder also work (see the type's discussion).
    ///
    /// - Parameters:
    ///   - name: The cache's folder name: one path component, not `.` or `..`.
    ///   - directory: The folder that holds named caches; `nil` for the platform's caches directory plus
    ///     `StoreFlowable`: on Apple platforms the user's caches directory, elsewhere `$XDG_CACHE_HOME`
    ///     (when absolute), else `$HOME/.cache`, else the temporary directory.
    ///   - policy: How long entries are fresh and usable; ``FreshnessPolicy/forever`` by default.
    ///   - clock: The time source for expiry; the system's wall clock by default.
    ///   - coder: Encodes keys and values; JSON by default. It must encode equal keys to equal bytes.
    ///   - durability: ``DiskCacheDurability/atomic`` (survives a process crash, the default) or
    ///     ``DiskCacheDurability/durable`` (also flushed to the device: survives a power loss).
    ///   - sizeLimit: The most bytes the entry files may take, or `nil` (the default) for no limit. An
    ///     entry larger than this on its own is not stored.
    ///   - events: Receives damaged files, expired entries and leftovers removed, evictions and read
    ///     failures; `nil` to ignore them. Called outside every lock, possibly from several tasks at once.
    /// - Throws: ``DiskCacheError/invalidName(_:)`` when `name` is not one folder name.
    public convenience init(
        name: String,
        directory: URL? = nil,
        policy: FreshnessPolicy = .forever,
        clock: any CacheClock = SystemCacheClock(),
        coder: any DiskCacheCoder<Key, Value> = JSONDiskCacheCoder<Key, Value>(),
        durability: DiskCacheDurability = .atomic,
        sizeLimit: Int? = nil,
        events: (@Sendable (DiskCacheEvent) -> Void)? = nil
    ) throws(DiskCacheError) {
        try self.init(
            name: name, directory: directory, policy: policy, clock: clock, coder: coder,
            durability: durability, sizeLimit: sizeLimit, events: events,
            keyHash: { FNV1a.hash(of: $0) })
    }

    /// Creates a cache whose entry files are named by `keyHash` instead of FNV-1a (for tests of hash
    /// collisions).
    package init(
        name: String, directory: URL?, policy: FreshnessPolicy, clock: any CacheClock,
        coder: any DiskCacheCoder<Key, Value>, durability: DiskCacheDurability, sizeLimit: Int?,
        events: (@Sendable (DiskCacheEvent) -> Void)?, keyHash: @escaping @Sendable (Data) -> UInt64
    ) throws(DiskCacheError) {
        try DiskCacheLocation.validate(name: name)
        let parent = directory ?? DiskCacheLocation.defaultDirectory()
        self.name = name
        folder = parent.appending(path: name, directoryHint: .isDirectory)
        folderPath = DiskCacheLocation.path(of: folder)
        self.policy = policy
        self.clock = clock
        self.coder = coder
        self.durability = durability
        self.sizeLimit = sizeLimit.map { max($0, 0) }
        self.events = events
        self.keyHash = keyHash
        turns = FileTurns.shared(forFolder: folderPath)
    }

    // MARK: KeyedCache

    /// Reads the entry of `key` from its file.
    ///
    /// A damaged file (truncated, checksum mismatch, other format version, another key, undecodable
    /// value) is reported, deleted and read as a miss; so is an entry past the policy's lifetime. With a
    /// size limit, the read counts as a use of the entry.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry as stored (its value, stored time and invalidation mark), or `nil`.
    /// - Throws: ``DiskCacheError/encodingFailed(_:)`` if the coder cannot encode `key`; never a file
    ///   system error (an unreadable file or folder is a miss, reported to `events`).
    public func entry(forKey key: Key) async throws(DiskCacheError) -> CacheEntry<Value>? {
        let keyBytes = try encodedKey(key)
        let name = fileName(forKeyBytes: keyBytes)
        let path = path(of: name)
        let descriptor: Int32
        do throws(SystemCallError) {
            descriptor = try FileIO.openForReading(path)
        } catch {
            if !error.isMissing { report([.readFailed(path: path, code: error.code)]) }
            return nil
        }
        defer { closeDescriptor(descriptor) }
        switch readEntryFile(descriptor) {
        case .failed(let code):
            report([.readFailed(path: path, code: code)])
            return nil
        case .damaged(let problem, let identity):
            await discard(name, identity: identity, reporting: .removedDamagedFile(path: path, problem: problem))
            return nil
        case .intact(let bytes, let record, let identity):
            guard bytes[record.keyRange].elementsEqual(keyBytes) else {
                await discard(
                    name, identity: identity, reporting: .removedDamagedFile(path: path, problem: .keyMismatch))
                return nil
            }
            if policy.isPastLifetime(storedAt: record.storedAt, now: clock.now) {
                await discard(name, identity: identity, reporting: .removedExpiredEntry(path: path))
                return nil
            }
            let value: Value
            do {
                value = try coder.decodeValue(from: Data(bytes[record.valueRange]))
            } catch {
                let problem = DiskCacheFileProblem.undecodableValue(reason: "\(error)")
                await discard(name, identity: identity, reporting: .removedDamagedFile(path: path, problem: problem))
                return nil
            }
            if sizeLimit != nil {
                FileIO.touch(descriptor)
                state.withLock { $0.index.use(name, size: bytes.count) }
            }
            return CacheEntry(value: value, storedAt: record.storedAt, isInvalidated: record.isInvalidated)
        }
    }

    /// Writes `entry` to the file of `key`, atomically replacing any previous entry.
    ///
    /// The entry is encoded, written to a temporary file in the folder (flushed first with
    /// ``DiskCacheDurability/durable``) and renamed over the key's file. The folder is created if
    /// missing (also after it was removed from outside). With a size limit, least recently used entries
    /// may then be evicted.
    ///
    /// - Parameters:
    ///   - entry: The entry; its `storedAt` and invalidation mark are stored with the value.
    ///   - key: Its key.
    /// - Throws: A ``DiskCacheError``: the coder failed, the folder cannot be created, the disk is full,
    ///   the folder is not writable, the entry is larger than the size limit, or another system call
    ///   failed. The key's previous entry is then unchanged (removed, for an entry too large).
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws(DiskCacheError) {
        let keyBytes = try encodedKey(key)
        let valueBytes: Data
        do {
            valueBytes = try coder.encodeValue(entry.value)
        } catch {
            throw .encodingFailed(error)
        }
        let bytes = DiskCacheFileFormat.encode(
            key: keyBytes, value: valueBytes, storedAt: entry.storedAt, isInvalidated: entry.isInvalidated)
        let name = fileName(forKeyBytes: keyBytes)
        if let sizeLimit, bytes.count > sizeLimit {
            try await removeFile(name)
            throw .entryTooLarge(bytes: bytes.count, sizeLimit: sizeLimit)
        }
        openIfNeeded()
        try await turns.withTurn(name) { () throws(DiskCacheError) in
            _ = try writeAtomically(bytes, to: name)
            if sizeLimit != nil { state.withLock { $0.index.use(name, size: bytes.count) } }
        }
        await evictIfOverLimit(keeping: name)
    }

    /// Deletes the file of `key`, if any.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: ``DiskCacheError/encodingFailed(_:)`` if the coder cannot encode `key`, or a file system
    ///   error when the file exists but cannot be deleted.
    public func removeEntry(forKey key: Key) async throws(DiskCacheError) {
        try await removeFile(fileName(forKeyBytes: encodedKey(key)))
    }

    /// Marks the entry of `key`, if any, as invalidated: its file is rewritten with the flag set
    /// (through a temporary file and a rename, like every write), keeping its value and stored time.
    ///
    /// - Parameter key: The key to invalidate.
    /// - Throws: ``DiskCacheError/encodingFailed(_:)`` if the coder cannot encode `key`, or a file system
    ///   error when the file exists but cannot be read or rewritten.
    public func invalidateEntry(forKey key: Key) async throws(DiskCacheError) {
        let keyBytes = try encodedKey(key)
        let name = fileName(forKeyBytes: keyBytes)
        let events = try await turns.withTurn(name) { () throws(DiskCacheError) in
            try markInvalidated(name, keyBytes: keyBytes)
        }
        report(events)
    }

    /// Marks every entry whose key satisfies `isIncluded` as invalidated.
    ///
    /// The folder is listed, each entry file is read and its key decoded; `isIncluded` runs with no lock
    /// or turn held, then the chosen files are rewritten with the flag set (each during its turn, after
    /// checking that it still holds the same key). Damaged and expired files found on the way are
    /// deleted, as a read would.
    ///
    /// - Parameter isIncluded: Chooses the keys to invalidate; called once per entry not yet invalidated.
    /// - Throws: A file system error when the folder cannot be listed or a chosen file cannot be
    ///   rewritten. A missing folder holds no entries.
    public func invalidateEntries(where isIncluded: @escaping @Sendable (Key) -> Bool) async throws(DiskCacheError) {
        for file in try listEntryFiles() {
            try await invalidateFile(file.name, where: isIncluded)
        }
    }

    /// Deletes every entry file of the folder (and temporary files left by crashed writers), leaving
    /// other files alone.
    ///
    /// - Throws: A file system error when the folder cannot be listed or a file cannot be deleted (the
    ///   other files are deleted anyway; the first error is thrown). A missing folder holds no entries.
    public func removeAllEntries() async throws(DiskCacheError) {
        let files = try scanFolder()
        var firstFailure: DiskCacheError?
        for file in files where Self.isEntryFileName(file.name) {
            do throws(DiskCacheError) {
                try await removeFile(file.name, synchronizing: false)
            } catch {
                firstFailure = firstFailure ?? error
            }
        }
        report(removeLeftovers(files))
        if durability == .durable, !files.isEmpty {
            do throws(SystemCallError) {
                try FileIO.synchronizeFolder(folderPath)
            } catch {
                firstFailure = firstFailure ?? .ioFailed(operation: "fsync", path: folderPath, code: error.code)
            }
        }
        if let firstFailure { throw firstFailure }
    }

    // MARK: Locating files

    /// The path of the file that holds (or would hold) the entry of `key`.
    ///
    /// - Parameter key: A key.
    /// - Returns: Its entry file's path, whether or not it exists.
    /// - Throws: ``DiskCacheError/encodingFailed(_:)`` if the coder cannot encode `key`.
    package func filePath(forKey key: Key) throws(DiskCacheError) -> String {
        try path(of: fileName(forKeyBytes: encodedKey(key)))
    }
}

/// The mutable state of a ``DiskCache``, guarded by its lock.
struct DiskCacheState: Sendable {
    /// Whether this instance already scanned its folder for leftovers (and built its index).
    var isOpen = false
    /// Whether a scan or a sweep is running; at most one at a time.
    var isSweeping = false
    /// The sizes and recency of the entry files, when there is a size limit.
    var index = DiskCacheIndex()
}
