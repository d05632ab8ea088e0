import PostgresNIO
import StoreFlowable

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One origin fetch per key across every instance (process) that shares a ``PostgresCache``: when
/// several instances miss the same key at once, one of them calls the origin and writes the value, and
/// the others wait for that write and use it.
///
/// ```swift
/// let singleFlight = PostgresSingleFlight(cache: users) { id in try await api.user(id) }
/// let stores = KeyedStore(cache: users, fetch: singleFlight.fetch)
/// ```
///
/// Pass ``fetch(_:)`` as the fetch of a ``KeyedStore`` over the same cache object. Within one instance
/// the store already runs one fetch per key; this type extends that to the fleet through a claim row per
/// key in the table `storeflowable_claim_<name>` (created by ``PostgresCacheSchema/migrate(name:client:timeout:)``).
///
/// **How it works.** A fetch of a key first tries to claim it: one statement inserts the claim, or
/// takes over a claim whose lease has expired, and reports the key's current row. The instance that
/// claimed calls the origin; its store then writes the value to the cache, and that write releases the
/// claim. Every other instance checks every `checkInterval` until the key's row is rewritten (it then
/// uses the written value if it is fresh) or the claim is gone (the holder failed: it then claims and
/// calls the origin itself). "Rewritten" counts from the store's read that found the miss, when the
/// cache object made it at most a `lease` before the fetch: an instance that read the miss before the
/// holder's write, but whose fetch claims only after the write released the claim (a busy machine),
/// uses the written value too instead of calling the origin again. A read that found the value fresh,
/// a read older than a `lease` or in the clock's future, and a read that this cache object's own write
/// of the key overlapped do not count; each read counts for one fetch.
///
/// **The promise.** While every holder finishes within its `lease`, at most one origin call per key
/// runs at a time across the fleet, and a burst of misses of one key on any number of instances costs
/// one origin call. "At most one" has limits, stated precisely:
/// - An instance that dies (or hangs) while holding a claim blocks the key's fetches on other instances
///   for at most the rest of its `lease`; then the next one takes the claim over and calls the origin.
///   The dead instance's origin call may still be running then (a hung process): the fleet then has two.
/// - An origin call longer than `lease` lets another instance start a second call.
/// - A holder whose origin call returned keeps the claim for at most ``writeGrace`` more, waiting for its
///   store's write; a store that does not write (its fetch was superseded by an update or reload, or
///   every caller left) lets the others fetch after that grace.
/// - When the database cannot be reached, an instance calls the origin without a claim (reported as
///   ``PostgresSingleFlightEvent/claimUnavailable(key:error:)``): an outage never blocks fetches.
/// - Leases are measured with the cache's ``PostgresCache/clock`` (the wall clock by default), so the
///   instances' clocks must agree to within a small part of the lease (NTP is enough).
///
/// **Concurrency.** ``fetch(_:)`` may be called from any task. A cancelled caller returns at once with
/// `CancellationError`; a holder that is cancelled (or whose origin call fails) releases its claim
/// before it returns, so the others fetch at once instead of waiting for the lease.
public final class PostgresSingleFlight<Key: Hashable & Sendable & Codable, Value: Sendable & Codable>: Sendable {
    /// The cache whose keys are claimed; the stores using ``fetch(_:)`` must write to this object.
    public let cache: PostgresCache<Key, Value>
    /// How long a claim holds before another instance may take it over.
    public let lease: Duration
    /// How long a holder whose origin call returned keeps its claim waiting for its store's write.
    public let writeGrace: Duration
    /// How often a waiting instance checks the key's row and claim.
    public let checkInterval: Duration
    private let sleeper: any Clock<Duration>
    private let origin: @Sendable (Key) async throws -> Value
    private let events: (@Sendable (PostgresSingleFlightEvent) -> Void)?
    /// Names this object's claims, so that only it releases them.
    private let instance = String(UInt64.random(in: 0...UInt64.max), radix: 36)

    /// Creates the fleet-wide single flight of `cache`'s keys, calling `origin` in at most one instance
    /// at a time per key.
    ///
    /// - Parameters:
    ///   - cache: The shared cache; its table must have been migrated by this version of the library
    ///     (which also creates the claim table).
    ///   - lease: How long a claim holds: the longest an instance that died while fetching can delay
    ///     a key; make it longer than your slowest origin call. 10 seconds by default.
    ///   - writeGrace: How long a holder keeps its claim after its origin call returned, for its store's
    ///     write; 2 seconds by default (capped at `lease`).
    ///   - checkInterval: How often a waiting instance checks the database (one short statement per
    ///     check per waiting key); 20 milliseconds by default.
    ///   - clock: The clock of the waits between checks (leases use the cache's clock).
    ///   - events: Receives claims, takeovers, values used from other instances and database failures;
    ///     `nil` to ignore them. Called from the fetching task.
    ///   - origin: Fetches the current value of a key. It runs in one instance at a time per key (see
    ///     the type's promise), in the task of the store's fetch, which the store cancels when nobody
    ///     waits for the result any more.
    public init(
        cache: PostgresCache<Key, Value>,
        lease: Duration = .seconds(10),
        writeGrace: Duration = .seconds(2),
        checkInterval: Duration = .milliseconds(20),
        clock: any Clock<Duration> = ContinuousClock(),
        events: (@Sendable (PostgresSingleFlightEvent) -> Void)? = nil,
        origin: @escaping @Sendable (Key) async throws -> Value
    ) {
        self.cache = cache
        self.lease = max(lease, .milliseconds(1))
        self.writeGrace = min(max(writeGrace, .zero), self.lease)
        self.checkInterval = max(checkInterval, .milliseconds(1))
        self.sleeper = clock
        self.events = events
        self.origin = origin
        cache.claims.startTrackingReads()
    }

    /// Fetches the value of `key`: calls the origin if this instance gets the key's claim, otherwise
    /// waits for the holder's write and returns that value (see the type's promise).
    ///
    /// - Parameter key: The key to fetch.
    /// - Returns: The origin's value, or the fresh value another instance wrote.
    /// - Throws: What the origin throws (when this instance called it); `CancellationError` when the
    ///   caller is cancelled; ``PostgresCacheError/encodingFailed(_:)`` when the key cannot be encoded.
    public func fetch(_ key: Key) async throws -> Value {
        let keyBytes = try cache.encodedKey(key)
        let token = instance + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        // The key's row number when the store read it as a miss or not fresh (within a lease before
        // this fetch), else when this fetch first found the claim held: a different one means another
        // instance's value was written since.
        var waitingSince = readBeforeFetch(keyBytes).map { WaitStart(seq: $0.seq) }
        var reportedWaiting = false
        while true {
            try Task.checkCancellation()
            let attempt: ClaimAttempt
            do {
                attempt = try await claim(keyBytes, token: token)
            } catch {
                if case .cancelled = error { throw CancellationError() }
                report(.claimUnavailable(key: PostgresCache<Key, Value>.printable(keyBytes), error: error.description))
                return try await origin(key)
            }
            if let waitingSince, attempt.seq != waitingSince.seq, let value = await freshValue(of: keyBytes) {
                // The holder's write arrived: use it (and give back the claim this check may have taken).
                if attempt.claimed { await release(keyBytes, token: token) }
                report(.usedValueOfOtherInstance(key: PostgresCache<Key, Value>.printable(keyBytes)))
                return value
            }
            if attempt.claimed {
                let printable = PostgresCache<Key, Value>.printable(keyBytes)
                report(attempt.tookOver ? .tookOverExpiredClaim(key: printable) : .claimed(key: printable))
                return try await fetchHolding(key, keyBytes, token: token)
            }
            if waitingSince == nil { waitingSince = WaitStart(seq: attempt.seq) }
            if !reportedWaiting {
                reportedWaiting = true
                report(.waiting(key: PostgresCache<Key, Value>.printable(keyBytes)))
            }
            try await sleeper.sleep(for: checkInterval)
        }
    }

    /// The key's row number (`nil` for no row) when a fetch began waiting for another holder.
    private struct WaitStart: Sendable {
        var seq: Int64?
    }

    /// The row the cache object read of `keyBytes` as a miss or not fresh, if that was at most a
    /// ``lease`` ago: the read this fetch follows, so that a value another instance wrote between that
    /// read and this fetch's claim is used instead of a second origin call. An older read is of another
    /// fetch (one whose caller left before it began) and is ignored, and so is a read the clock shows
    /// in its future (the wall clock went back): its age is unknown.
    private func readBeforeFetch(_ keyBytes: Data) -> PostgresClaimRegistry.ReadRow? {
        guard let read = cache.claims.takeRead(keyBytes) else { return nil }
        let age = read.readAt.duration(to: cache.clock.now)
        return age >= .zero && age <= lease ? read : nil
    }

    // MARK: Claims

    /// What one claim attempt found.
    private struct ClaimAttempt: Sendable {
        /// Whether this fetch now holds the claim.
        var claimed: Bool
        /// Whether it took over another holder's expired claim.
        var tookOver: Bool
        /// The `seq` of the key's cache row, `nil` for none.
        var seq: Int64?
    }

    /// Claims `keyBytes` unless another unexpired claim exists, and reads the key's row number, in one
    /// statement.
    private func claim(_ keyBytes: Data, token: String) async throws(PostgresCacheError) -> ClaimAttempt {
        let claims = cache.table.claimTable
        let entries = cache.table.table
        let now = cache.clock.now
        let nowNanoseconds = now.nanosecondsSince1970
        let expires = now.advanced(by: lease).nanosecondsSince1970
        return try await cache.database.query(
            "claim",
            """
            WITH claimed AS (
                INSERT INTO \(unescaped: claims) AS claim (key, holder, expires_at)
                VALUES (\(keyBytes), \(token), \(expires))
                ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
                    WHERE claim.expires_at <= \(nowNanoseconds)
                RETURNING xmax <> 0 AS took_over)
            SELECT EXISTS (SELECT 1 FROM claimed), COALESCE((SELECT took_over FROM claimed), false),
                (SELECT seq FROM \(unescaped: entries) WHERE key = \(keyBytes))
            """
        ) { rows in
            var attempt = ClaimAttempt(claimed: false, tookOver: false, seq: nil)
            for row in rows {
                let (claimed, tookOver, seq) = try row.decode((Bool, Bool, Int64?).self)
                attempt = ClaimAttempt(claimed: claimed, tookOver: tookOver, seq: seq)
            }
            return attempt
        }
    }

    /// Calls the origin holding the claim. On success the claim is shortened to ``writeGrace`` and left
    /// for the store's write to release; on failure or cancellation it is released at once.
    private func fetchHolding(_ key: Key, _ keyBytes: Data, token: String) async throws -> Value {
        let value: Value
        do {
            value = try await origin(key)
        } catch {
            await release(keyBytes, token: token)
            throw error
        }
        cache.claims.hold(keyBytes, token: token)
        await shorten(keyBytes, token: token)
        return value
    }

    /// Cuts the claim's lease to ``writeGrace`` from now. Runs in a task of its own, so that a caller
    /// cancelled meanwhile cannot skip it; a failure leaves the full lease (the write still releases it).
    private func shorten(_ keyBytes: Data, token: String) async {
        let claims = cache.table.claimTable
        let expires = cache.clock.now.advanced(by: writeGrace).nanosecondsSince1970
        let database = cache.database
        await Task {
            try? await database.execute(
                "claim",
                """
                UPDATE \(unescaped: claims) SET expires_at = \(expires)
                WHERE key = \(keyBytes) AND holder = \(token)
                """)
        }.value
    }

    /// Deletes the claim `token` on `keyBytes`, if it still holds it. Runs in a task of its own, so that
    /// a cancelled caller still releases its claim; a failure leaves the claim to expire.
    private func release(_ keyBytes: Data, token: String) async {
        cache.claims.forget(keyBytes, token: token)
        let database = cache.database
        let claims = cache.table.claimTable
        await Task {
            try? await database.execute(
                "release claim", "DELETE FROM \(unescaped: claims) WHERE key = \(keyBytes) AND holder = \(token)")
        }.value
    }

    /// The cached value of `keyBytes` if it is fresh, else `nil` (also when the read fails); the read
    /// is not remembered as one a fetch follows.
    private func freshValue(of keyBytes: Data) async -> Value? {
        guard let (entry, _) = try? await cache.readEntry(keyBytes), let entry, cache.freshness(of: entry) == .fresh
        else { return nil }
        return entry.value
    }

    private func report(_ event: PostgresSingleFlightEvent) {
        events?(event)
    }
}
