public import PostgresNIO
public import StoreFlowable
public import StoreFlowableFoundation

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``KeyedCache`` that keeps its entries in a PostgreSQL table: values survive a restart of the
/// process, and every process connected to the database shares them.
///
/// ```swift
/// let client = PostgresClient(configuration: configuration)
/// async let running: Void = client.run()   // or in a task group, or a ServiceGroup
/// try await PostgresCacheSchema.migrate(name: "users", client: client)
/// let users = try await PostgresCache<Int, User>(
///     name: "users", client: client, policy: FreshnessPolicy(freshFor: .seconds(300)))
/// try await users.setEntry(CacheEntry(value: user, storedAt: users.clock.now), forKey: user.id)
/// let cached = try await users.entry(forKey: user.id)   // also from another process, or after a restart
/// ```
///
/// **Table.** Each cache name has a table `storeflowable_cache_<name>`, created only by
/// ``PostgresCacheSchema/migrate(name:client:timeout:)`` (see ``PostgresCacheSchema`` for its columns).
/// One row per key: the encoded key and value (by the ``DiskCacheCoder`` you pass, JSON by default),
/// when the entry was stored (a ``CacheTime``, to the nanosecond), its invalidation mark, the value
/// format it was written with, its size and the write's sequence number.
///
/// **Writes are single statements.** ``setEntry(_:forKey:)`` is one upsert
/// (`INSERT … ON CONFLICT (key) DO UPDATE`) that stores the entry's own `storedAt` and mark;
/// ``invalidateEntry(forKey:)`` is one `UPDATE` that sets the mark in place; ``removeEntry(forKey:)``
/// and ``removeAllEntries()`` are one `DELETE` each. PostgreSQL makes each atomic: readers in any
/// process see the old row or the new one, and concurrent writers of one key end with one of their
/// entries, complete.
///
/// **Changes across instances.** Each write that changes a row also sends a notification on the
/// cache's channel, `storeflowable_<name>` (``notificationChannel``), with `pg_notify` in the write's
/// own statement: PostgreSQL delivers it when the write commits, and never for a write that failed or
/// changed nothing (rewriting the value, format and mark a row already has only refreshes its
/// `stored_at`, silently). ``listenForChanges(retry:clock:onChange:)`` receives the other cache
/// objects' notifications, in this process or another, and hands you the keys they changed.
///
/// **Reads never serve a wrong value.** A row written with another `valueFormat` (you bump the
/// format when the value's encoding changes), a row whose value the coder cannot decode, and a row
/// past the policy's ``FreshnessPolicy/lifetime`` (by its stored time and this cache's ``clock``) are
/// deleted and read as misses, and reported to `events`. Such a delete removes the row only if it was
/// not rewritten meanwhile (its `seq` is unchanged), so a newer entry written by another task is
/// never lost.
///
/// **Size limit.** With a `sizeLimit`, each write is followed by one statement that deletes the oldest
/// written rows (lowest `seq`) until the key and value bytes of the rest fit in the limit, never the
/// row just written; each deleted row is reported as ``PostgresCacheEvent/evicted(key:bytes:)``. That
/// statement reads the whole table's `size` and `seq` columns, so keep limited caches modest. An entry
/// larger than the limit on its own is not stored (``PostgresCacheError/entryTooLarge(bytes:sizeLimit:)``).
///
/// **Failures.** Every operation throws a ``PostgresCacheError``: a database failure (connection
/// refused, the server gone, a statement rejected) as ``PostgresCacheError/databaseFailed(operation:sqlState:message:)``
/// with the underlying error's description, and an operation that got no answer within `timeout` as
/// ``PostgresCacheError/timedOut(operation:after:)``. Stores built on the cache count a failed read as
/// a miss and report a failed write. Once the server is back, the same cache works again: the client's
/// pool reconnects on its own.
///
/// **Concurrency.** Every method may be called from any task, concurrently; the cache holds no state
/// shared with other instances besides its table (it remembers, under a short lock, only what its own
/// single flights need of its own reads), so instances and processes on one table coordinate only
/// through PostgreSQL. Each operation takes a connection from the client's pool for its statements
/// only. ``invalidateEntries(where:)`` runs your predicate with no connection held and no
/// row locked.
///
/// **Events.** `events` receives what the cache handled on its own (see ``PostgresCacheEvent``), on the
/// task that noticed it, after the statement that handled it returned.
public final class PostgresCache<Key: Hashable & Sendable & Codable, Value: Sendable & Codable>: KeyedCache {
    /// The cache's name: its table is `storeflowable_cache_<name>`.
    public let name: String
    /// How long entries stay fresh and usable. Rows past its ``FreshnessPolicy/lifetime`` are deleted
    /// when found.
    public let policy: FreshnessPolicy
    /// The time source of expiry decisions. Entries keep the time they were stored with (`storedAt`).
    public let clock: any CacheClock
    /// The value format this cache writes and reads; rows of another format are misses, deleted when
    /// found.
    public let valueFormat: Int32
    /// The most bytes the rows' keys and values may take, or `nil` for no limit.
    public let sizeLimit: Int?
    /// The longest time one operation may wait for the database.
    public let timeout: Duration
    /// This cache object's id in its notifications: random for each object unless you pass one to the
    /// initialiser. A listener skips the notifications of its own cache object (its writes need no
    /// news), and handles those of every other one, also of another object in the same process.
    public let instanceID: String

    /// The channel of the cache's notifications: `storeflowable_<name>`.
    public var notificationChannel: String { table.channel }

    /// The cache's table and names.
    let table: PostgresCacheTable
    /// The connection pool and the timeout.
    let database: PostgresCacheDatabase
    /// Encodes and decodes keys and values.
    let coder: any DiskCacheCoder<Key, Value>
    /// Receives the events.
    let events: (@Sendable (PostgresCacheEvent) -> Void)?
    /// The fetch claims of ``PostgresSingleFlight``s waiting for this cache's next write of their key.
    let claims = PostgresClaimRegistry()

    /// Opens the cache `name` in the database of `client`, after checking that its table was migrated.
    ///
    /// Create one instance per cache name and share it; several instances (or processes) on one table
    /// also work (see the type's discussion). The client must be running (`client.run()` in a task)
    /// for as long as the cache is used.
    ///
    /// - Parameters:
    ///   - name: The cache name, `[a-z][a-z0-9_]{0,42}`; its table is `storeflowable_cache_<name>`.
    ///   - client: The connection pool to use.
    ///   - policy: How long entries are fresh and usable; ``FreshnessPolicy/forever`` by default.
    ///   - clock: The time source for expiry; the system's wall clock by default.
    ///   - coder: Encodes keys and values; JSON by default. It must encode equal keys to equal bytes.
    ///   - valueFormat: The version of the value encoding, `1` by default. Pass a new number when the
    ///     encoding of `Value` changes: rows written with another number are then misses, deleted when
    ///     found, instead of values decoded wrongly.
    ///   - sizeLimit: The most bytes of keys and values the table may hold, or `nil` (the default) for
    ///     no limit. An entry larger than this on its own is not stored.
    ///   - timeout: The longest time one operation may wait for the database (for a connection, its
    ///     statements and their rows); 10 seconds by default.
    ///   - instanceID: This object's id in its notifications, 1 to 64 ASCII letters, digits, `.`, `_`
    ///     or `-`; `nil` (the default) for 32 random hex digits. Give two objects the same id only if
    ///     neither needs to hear of the other's writes.
    ///   - events: Receives rows removed (another format, expired, undecodable, evicted), failed
    ///     cleanups and what the listener noticed (see ``PostgresCacheEvent``); `nil` to ignore them.
    ///     Called possibly from several tasks at once.
    /// - Throws: ``PostgresCacheError/invalidName(_:)``, ``PostgresCacheError/invalidInstanceID(_:)``,
    ///   ``PostgresCacheError/notMigrated(name:)`` when the table does not exist,
    ///   ``PostgresCacheError/schemaMismatch(found:expected:)`` when it has another layout, or a database
    ///   error.
    public init(
        name: String,
        client: PostgresClient,
        policy: FreshnessPolicy = .forever,
        clock: any CacheClock = SystemCacheClock(),
        coder: any DiskCacheCoder<Key, Value> = JSONDiskCacheCoder<Key, Value>(),
        valueFormat: Int32 = 1,
        sizeLimit: Int? = nil,
        timeout: Duration = .seconds(10),
        instanceID: String? = nil,
        events: (@Sendable (PostgresCacheEvent) -> Void)? = nil
    ) async throws(PostgresCacheError) {
        let table = try PostgresCacheTable(name: name)
        let instanceID = instanceID ?? PostgresCacheNotification.randomInstanceID()
        guard PostgresCacheNotification.isValidInstanceID(instanceID) else { throw .invalidInstanceID(instanceID) }
        let database = PostgresCacheDatabase(client: client, timeout: timeout)
        try await PostgresCacheSchema.check(table, database: database)
        self.name = name
        self.table = table
        self.database = database
        self.policy = policy
        self.clock = clock
        self.coder = coder
        self.valueFormat = valueFormat
        self.sizeLimit = sizeLimit.map { max($0, 0) }
        self.timeout = timeout
        self.instanceID = instanceID
        self.events = events
    }

    // MARK: Encoding

    /// The bytes of `key`.
    ///
    /// - Parameter key: A key.
    /// - Returns: What the coder made of it.
    /// - Throws: ``PostgresCacheError/encodingFailed(_:)``.
    func encodedKey(_ key: Key) throws(PostgresCacheError) -> Data {
        do {
            return try coder.encodeKey(key)
        } catch {
            throw .encodingFailed(error)
        }
    }

    /// An encoded key as text, for events.
    ///
    /// - Parameter bytes: An encoded key.
    /// - Returns: Its bytes read as UTF-8, invalid bytes replaced.
    static func printable(_ bytes: Data) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Sends `event` to the handler, if any.
    ///
    /// - Parameter event: What the cache handled.
    func report(_ event: PostgresCacheEvent) {
        events?(event)
    }
}
