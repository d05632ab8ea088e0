/// Two caches used as one: a fast ``front`` tier (memory) in front of a slower ``back`` tier (disk, a
/// database) that is the source of truth.
///
/// ```swift
/// let users = TieredCache(
///     front: MemoryCache<Int, User>(countLimit: 1_000),
///     back: DiskCache<Int, User>(name: "users", policy: FreshnessPolicy(freshFor: .seconds(300))))
/// let store = KeyedStore(cache: users) { id in try await api.user(id) }  // one KeyedCache to stores
/// ```
///
/// (`DiskCache` is in the `StoreFlowableFoundation` product.) Here the tiered cache serves by the
/// back's policy and clock, its defaults.
///
/// **Reading** (read-through): a usable entry in the front is returned as it is. Otherwise the back is
/// read, and a usable entry found there is copied to the front *unchanged* (its original `storedAt` and
/// invalidation mark, never a new timestamp, so a value does not look younger for having moved) and
/// returned. *Usable* is decided by this cache's own ``policy`` and ``clock``, whatever the tiers'
/// policies: an entry past ``FreshnessPolicy/lifetime`` can never be served, so one in the front counts
/// as a front miss and one in the back is not returned (reads never remove it: a removal could race
/// with a write).
///
/// **Writing** (write-through): ``setEntry(_:forKey:)`` writes the back first, then the front. The back
/// is the source of truth and outlives the process: writing it first means a crash, a cancellation or
/// a failure between the two writes leaves at worst a front that is older than the back (or empty),
/// never a front holding a value the back never got, which a later read would serve as if saved. Removal,
/// invalidation (of one key or by predicate) and ``removeAllEntries()`` likewise reach the back, then
/// the front.
///
/// **Failures**, tier by tier (the rule: the front is never left newer than the back):
/// - *Front read fails*: counts as a front miss; the back is read (and the front refilled from it).
/// - *Back read fails*: ``entry(forKey:)`` throws the back's error (stores count it as a miss).
/// - *Copying to the front fails* (read-through): ignored; the entry read from the back is returned.
/// - *Back write fails*: by default, the front's entry of the key is removed (so the next read goes to
///   the back, whatever state the failed write left it in), and ``setEntry(_:forKey:)`` throws the
///   back's error. With an `onBackWriteFailure` handler (see ``init(front:back:policy:clock:onBackWriteFailure:)``),
///   the back's error goes to the handler instead, the front is written, and the write succeeds: stores
///   keep serving from memory while the slow tier is full or unwritable.
/// - *Front write fails* after the back write succeeded: the front's entry is removed, and the write
///   succeeds (the back holds the entry; the next read copies it to the front). If that removal fails
///   too, the front may still hold the older entry and ``setEntry(_:forKey:)`` throws the front's error.
/// - *Removal or invalidation fails* in one tier: the other tier is still changed, and the call throws
///   the back's error, else the front's. A failed front removal can leave the front serving what the
///   back no longer has; the caller learns of it from the error.
///
/// **Concurrency**: every method may be called from any task, concurrently. A read that copies an entry
/// to the front while the same key is being changed, or two changes of one key that overlap, could
/// leave the front with an older entry than the back; when this cache sees such an overlap, the
/// overlapping operations remove the key's front entry once they are done (best effort: a failing
/// removal is ignored), so the next read goes to the back. Copies of a `TieredCache` share this
/// bookkeeping; two caches created separately over the same tiers do not, nor does code that writes a
/// tier directly: after such a write the front may serve its older entry until it drops it.
public struct TieredCache<Front: KeyedCache, Back: KeyedCache>: KeyedCache
where Front.Key == Back.Key, Front.Value == Back.Value {
    /// The type that identifies a value: the tiers' key type.
    public typealias Key = Front.Key
    /// The type of the cached values: the tiers' value type.
    public typealias Value = Front.Value

    /// The fast tier, read first and filled from the back.
    public let front: Front
    /// The slow tier and source of truth, written first.
    public let back: Back
    /// How long entries stay fresh and usable: stores built on this cache serve by it, and reads skip
    /// entries past its lifetime in either tier.
    public let policy: FreshnessPolicy
    /// The time source for ages, used with ``policy``.
    public let clock: any CacheClock
    /// Which reads and changes overlap a change of the same key.
    private let overlaps = Overlaps()
    /// Receives the back's write errors instead of the caller, if set.
    private let onBackWriteFailure: (@Sendable (any Error) -> Void)?

    /// Creates a cache reading `front` first and writing `back` first.
    ///
    /// - Parameters:
    ///   - front: The fast tier (for example a memory cache). Its own policy only decides what it drops;
    ///     give it a policy at least as long as this cache's, or it will miss more than it needs to.
    ///   - back: The slow tier and source of truth (for example a disk cache).
    ///   - policy: The policy stores serve by; `nil` (the default) uses the back's.
    ///   - clock: The time source; `nil` (the default) uses the back's.
    ///   - onBackWriteFailure: When set, a failed write of the back tier is reported here (on the writing
    ///     task, under no lock) instead of failing the write, and the front is written all the same. Use
    ///     it to keep serving from memory while the disk is full or unwritable. When `nil` (the default),
    ///     the write throws the back's error and the front's entry is removed.
    public init(
        front: Front, back: Back, policy: FreshnessPolicy? = nil, clock: (any CacheClock)? = nil,
        onBackWriteFailure: (@Sendable (any Error) -> Void)? = nil
    ) {
        self.front = front
        self.back = back
        self.policy = policy ?? back.policy
        self.clock = clock ?? back.clock
        self.onBackWriteFailure = onBackWriteFailure
    }

    /// Reads the entry of `key` from the front, or else from the back, copying it to the front.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry as stored (its timestamp and mark unchanged), or `nil` when neither tier
    ///   holds an entry inside ``policy``'s lifetime.
    /// - Throws: What the back's read throws, when the front missed (a failing front read is a miss).
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        if let hit = try? await front.entry(forKey: key), isUsable(hit) { return hit }
        let ticket = overlaps.begin(key, isChange: false)
        let found: CacheEntry<Value>?
        do {
            found = try await back.entry(forKey: key)
        } catch {
            _ = overlaps.end(ticket)
            throw error
        }
        guard let found, isUsable(found) else {
            _ = overlaps.end(ticket)
            return nil
        }
        // A change of the key that started before this copy might finish before it: skip the copy, or
        // undo it below, rather than leave the front older than the back.
        let copied = !overlaps.isOverlapped(ticket)
        if copied { try? await front.setEntry(found, forKey: key) }
        if overlaps.end(ticket), copied { try? await front.removeEntry(forKey: key) }
        return found
    }

    /// Stores `entry` under `key` in the back, then in the front.
    ///
    /// - Parameters:
    ///   - entry: The entry to store, unchanged in both tiers.
    ///   - key: Its key.
    /// - Throws: The back's error when the back write fails (the front's entry is then removed); the
    ///   front's error when the front write fails and removing the front's entry fails too.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws {
        try await change(key) {
            do {
                try await back.setEntry(entry, forKey: key)
            } catch {
                guard let onBackWriteFailure else {
                    try? await front.removeEntry(forKey: key)
                    throw error
                }
                // Serving from memory while the slow tier fails: the front may now be newer than the back.
                onBackWriteFailure(error)
            }
            do {
                try await front.setEntry(entry, forKey: key)
            } catch let frontError {
                do {
                    try await front.removeEntry(forKey: key)
                } catch {
                    throw frontError
                }
            }
        }
    }

    /// Removes the entry of `key` from the back, then from the front.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: The back's error, else the front's; each tier is tried either way.
    public func removeEntry(forKey key: Key) async throws {
        try await change(key) {
            try await bothTiers(
                back: { try await back.removeEntry(forKey: key) },
                front: { try await front.removeEntry(forKey: key) })
        }
    }

    /// Marks the entry of `key` as invalidated in the back, then in the front.
    ///
    /// - Parameter key: The key to invalidate.
    /// - Throws: The back's error, else the front's; each tier is tried either way.
    public func invalidateEntry(forKey key: Key) async throws {
        try await change(key) {
            try await bothTiers(
                back: { try await back.invalidateEntry(forKey: key) },
                front: { try await front.invalidateEntry(forKey: key) })
        }
    }

    /// Marks every entry whose key satisfies `isIncluded` as invalidated, in the back, then in the
    /// front.
    ///
    /// - Parameter isIncluded: Chooses the keys to invalidate; each tier calls it for its own keys.
    /// - Throws: The back's error, else the front's; each tier is tried either way.
    public func invalidateEntries(where isIncluded: @escaping @Sendable (Key) -> Bool) async throws {
        overlaps.beginChangingAll()
        defer { overlaps.endChangingAll() }
        try await bothTiers(
            back: { try await back.invalidateEntries(where: isIncluded) },
            front: { try await front.invalidateEntries(where: isIncluded) })
    }

    /// Removes every entry from the back, then from the front.
    ///
    /// - Throws: The back's error, else the front's; each tier is tried either way.
    public func removeAllEntries() async throws {
        overlaps.beginChangingAll()
        defer { overlaps.endChangingAll() }
        try await bothTiers(
            back: { try await back.removeAllEntries() },
            front: { try await front.removeAllEntries() })
    }

    /// Whether `entry` may still be served at all by ``policy`` at ``clock``'s current time.
    private func isUsable(_ entry: CacheEntry<Value>) -> Bool {
        !policy.isPastLifetime(storedAt: entry.storedAt, now: clock.now)
    }

    /// Runs `body`, a change of `key`, and removes the key's front entry afterwards if another change
    /// of the key overlapped it.
    private func change(_ key: Key, _ body: () async throws -> Void) async throws {
        let ticket = overlaps.begin(key, isChange: true)
        let result: Result<Void, any Error>
        do {
            try await body()
            result = .success(())
        } catch {
            result = .failure(error)
        }
        if overlaps.end(ticket) { try? await front.removeEntry(forKey: key) }
        try result.get()
    }

    /// Runs `back`, then `front` even if `back` failed.
    ///
    /// - Throws: The back's error, else the front's.
    private func bothTiers(
        back: () async throws -> Void, front: () async throws -> Void
    ) async throws {
        var failure: (any Error)?
        do { try await back() } catch { failure = error }
        do { try await front() } catch { failure = failure ?? error }
        if let failure { throw failure }
    }
}

extension TieredCache {
    /// Tracks, for each key, the reads copying it to the front and the changes in progress, so that an
    /// operation can tell whether a change of its key overlapped it.
    ///
    /// An operation *begins* before its first tier access and *ends* after its last. It is overlapped
    /// when a change of its key (or of every key) was in progress when it began, or began before it
    /// ended. Of two overlapping operations, both are then overlapped, so the later of their front
    /// removals comes after both of their front writes. Memory is kept only for operations in progress.
    final class Overlaps: Sendable {
        /// One operation in progress.
        struct Ticket {
            let key: Key
            let id: UInt64
            let isChange: Bool
        }

        /// The operations in progress on one key.
        struct Activity: Sendable {
            /// The number of changes of the key in progress.
            var changes = 0
            /// Whether each operation in progress, by id, has been overlapped.
            var isOverlapped: [UInt64: Bool] = [:]
        }

        /// The bookkeeping of every key.
        struct State: Sendable {
            var lastID: UInt64 = 0
            var keys: [Key: Activity] = [:]
            /// The number of changes of every key (predicate invalidations, removals of all) in progress.
            var allKeyChanges = 0
        }

        /// Guards ``State``; held only to read and update it (the lock rule at ``PthreadMutex``).
        private let state = LockedValue(State())

        /// Registers an operation on `key`; a change marks every other operation on the key overlapped.
        func begin(_ key: Key, isChange: Bool) -> Ticket {
            state.withLock { state in
                state.lastID += 1
                let id = state.lastID
                var activity = state.keys.removeValue(forKey: key) ?? Activity()
                let overlapped = activity.changes > 0 || state.allKeyChanges > 0
                if isChange {
                    for other in activity.isOverlapped.keys { activity.isOverlapped[other] = true }
                    activity.changes += 1
                }
                activity.isOverlapped[id] = overlapped
                state.keys[key] = activity
                return Ticket(key: key, id: id, isChange: isChange)
            }
        }

        /// Whether a change overlapped the operation of `ticket` so far.
        func isOverlapped(_ ticket: Ticket) -> Bool {
            state.withLock { $0.keys[ticket.key]?.isOverlapped[ticket.id] ?? false }
        }

        /// Unregisters the operation of `ticket`.
        ///
        /// - Returns: Whether a change overlapped it.
        func end(_ ticket: Ticket) -> Bool {
            state.withLock { state in
                guard var activity = state.keys.removeValue(forKey: ticket.key) else { return false }
                let overlapped = activity.isOverlapped.removeValue(forKey: ticket.id) ?? false
                if ticket.isChange { activity.changes -= 1 }
                if !activity.isOverlapped.isEmpty { state.keys[ticket.key] = activity }
                return overlapped
            }
        }

        /// Registers a change of every key: every operation in progress is overlapped.
        func beginChangingAll() {
            state.withLock { state in
                state.allKeyChanges += 1
                state.keys = state.keys.mapValues { activity in
                    var activity = activity
                    activity.isOverlapped = activity.isOverlapped.mapValues { _ in true }
                    return activity
                }
            }
        }

        /// Unregisters a change of every key.
        func endChangingAll() {
            state.withLock { $0.allKeyChanges -= 1 }
        }
    }
}
