import PostgresNIO
public import StoreFlowable

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PostgresCache {
    /// Stores `entry` under `key`, replacing any previous entry, in one statement: an upsert
    /// (`INSERT … ON CONFLICT (key) DO UPDATE`) and the notification of the change.
    ///
    /// The row keeps the entry's own `storedAt` (to the nanosecond) and invalidation mark, this cache's
    /// value format and a new sequence number, and the statement notifies the cache's channel (see
    /// ``listenForChanges(retry:clock:onChange:)``). A row that already holds the same value bytes,
    /// format and mark is not changed and nothing is notified: only a newer `storedAt` is stored, with a
    /// new sequence number, so that instances that fetched and stored the same value do not wake each
    /// other. With a size limit, the oldest written rows may then be evicted, never this one.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - key: Its key.
    /// - Throws: ``PostgresCacheError/encodingFailed(_:)`` when the coder fails;
    ///   ``PostgresCacheError/entryTooLarge(bytes:sizeLimit:)`` when the encoded key and value are
    ///   larger than the size limit (the key's previous row is then deleted, and that is notified); a
    ///   database error or timeout. A failed eviction after the write is reported to `events` instead,
    ///   since the entry was stored.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws(PostgresCacheError) {
        let keyBytes = try encodedKey(key)
        let valueBytes: Data
        do {
            valueBytes = try coder.encodeValue(entry.value)
        } catch {
            throw .encodingFailed(error)
        }
        let size = keyBytes.count + valueBytes.count
        if let sizeLimit, size > sizeLimit {
            try await removeRow(keyBytes)
            throw .entryTooLarge(bytes: size, sizeLimit: sizeLimit)
        }
        let table = table.table
        let sequence = PostgresCacheTable.sequence
        let storedAt = entry.storedAt.nanosecondsSince1970
        let isInvalidated = entry.isInvalidated
        let format = valueFormat
        // A bytea holds at most 1 GiB, so a size that does not fit in 32 bits fails on the server anyway.
        let rowSize = Int32(clamping: size)
        let channel = notificationChannel
        let note = notificationPrefix("set", keyBytes)
        // `written` upserts, unless the row already holds this value, format and mark: the conflict
        // branch's WHERE sees the newest committed row (locked, so no other write changes it before
        // this one commits), and only a row it changed is returned and notified. Its update draws the
        // row's new `seq` once it holds that lock, not the number drawn for the insert (before the
        // statement waited for a concurrent writer of the key), so that a row's `seq` grows in the order
        // its writes commit. `refreshed` then stores a newer `storedAt` in such a row, with a new `seq`
        // (a read that found the row expired deletes it only if its `seq` is unchanged). It runs only
        // when `written` returned nothing (the one-time filter on `written` makes PostgreSQL run
        // `written` first), and it finds the row through the statement's snapshot: a row first
        // inserted by a concurrent transaction after that snapshot keeps its own `storedAt`, of the same
        // moment. `input` binds the key and value once.
        let seq = try await database.query(
            "write",
            """
            WITH input AS (
                SELECT \(keyBytes)::bytea AS key, \(valueBytes)::bytea AS value, \(storedAt)::int8 AS stored_at,
                    \(isInvalidated)::bool AS invalidated, \(format)::int4 AS format
            ), written AS (
                INSERT INTO \(unescaped: table) AS entry (key, value, stored_at, invalidated, format, size, seq)
                SELECT key, value, stored_at, invalidated, format, \(rowSize), nextval(\(sequence)) FROM input
                ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, stored_at = EXCLUDED.stored_at,
                    invalidated = EXCLUDED.invalidated, format = EXCLUDED.format, size = EXCLUDED.size,
                    seq = nextval(\(sequence))
                WHERE entry.value <> EXCLUDED.value OR entry.invalidated <> EXCLUDED.invalidated
                    OR entry.format <> EXCLUDED.format
                RETURNING entry.seq
            ), refreshed AS (
                UPDATE \(unescaped: table) AS entry SET stored_at = input.stored_at, seq = nextval(\(sequence))
                FROM input
                WHERE entry.key = input.key AND entry.stored_at < input.stored_at AND entry.value = input.value
                    AND entry.invalidated = input.invalidated AND entry.format = input.format
                    AND NOT EXISTS (SELECT FROM written)
                RETURNING entry.seq
            )
            SELECT seq, pg_notify(\(channel), \(note) || seq::text)::text FROM written
            UNION ALL SELECT seq, NULL FROM refreshed
            """
        ) { rows in
            var seq: Int64?
            for row in rows {
                let (found, _) = try row.decode((Int64, String?).self)
                seq = found
            }
            return seq
        }
        await releaseClaim(afterWriting: keyBytes)
        if let sizeLimit, let seq { await evict(toFit: sizeLimit, keeping: seq) }
    }

    /// The text a notification of `operation` on `keyBytes` starts with, before the row's `seq`.
    ///
    /// - Parameters:
    ///   - operation: `set`, `remove` or `invalidate`.
    ///   - keyBytes: The encoded key, or `nil` for every key.
    /// - Returns: The payload's prefix, bound as a parameter of the writing statement.
    func notificationPrefix(_ operation: String, _ keyBytes: Data?) -> String {
        PostgresCacheNotification.prefix(instanceID: instanceID, operation: operation, target: keyBytes)
    }

    /// Deletes the oldest written rows (lowest `seq`) until the rest fit in `sizeLimit`, keeping the
    /// row numbered `seq`; reports each eviction, or the failure.
    ///
    /// One statement: a window sum over the rows from the newest down marks every row past the limit.
    /// It notifies nothing: an evicted row was the oldest written, and another instance that still
    /// serves it from its memory serves a value that was right when written; the next read of the
    /// key through the table is a miss, as after any eviction.
    ///
    /// - Parameters:
    ///   - sizeLimit: The most bytes of keys and values the table may hold.
    ///   - seq: The number of the row just written, which is never evicted.
    func evict(toFit sizeLimit: Int, keeping seq: Int64) async {
        let table = table.table
        let limit = Int64(sizeLimit)
        do throws(PostgresCacheError) {
            let evicted = try await database.query(
                "evict",
                """
                DELETE FROM \(unescaped: table) AS entry
                USING (SELECT key, seq, sum(size) OVER (ORDER BY seq DESC) AS total FROM \(unescaped: table))
                    AS ranked
                WHERE entry.key = ranked.key AND entry.seq = ranked.seq AND ranked.total > \(limit)
                    AND entry.seq <> \(seq)
                RETURNING entry.key, entry.size, entry.seq
                """
            ) { rows in
                let evicted = try rows.map { row -> (key: Data, size: Int32, seq: Int64) in
                    try row.decode((Data, Int32, Int64).self)
                }
                // Oldest first, as they were chosen (RETURNING has no order).
                return evicted.sorted { $0.seq < $1.seq }
            }
            for row in evicted { report(.evicted(key: Self.printable(row.key), bytes: Int(row.size))) }
        } catch {
            report(.removeFailed(key: "(size-limit eviction)", error: error.description))
        }
    }

    /// Deletes the row of `key`, if any, in one `DELETE` that notifies the removal when there was a row.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: ``PostgresCacheError/encodingFailed(_:)``, a database error or a timeout.
    public func removeEntry(forKey key: Key) async throws(PostgresCacheError) {
        let keyBytes = try encodedKey(key)
        try await removeRow(keyBytes)
        await releaseClaim(afterWriting: keyBytes)
    }

    /// Deletes the row of `keyBytes`, if any, and notifies its removal in the same statement.
    ///
    /// - Parameter keyBytes: The encoded key.
    /// - Throws: A database error or a timeout.
    func removeRow(_ keyBytes: Data) async throws(PostgresCacheError) {
        let table = table.table
        let channel = notificationChannel
        let note = notificationPrefix("remove", keyBytes)
        try await database.execute(
            "remove",
            """
            WITH removed AS (DELETE FROM \(unescaped: table) WHERE key = \(keyBytes) RETURNING seq)
            SELECT pg_notify(\(channel), \(note) || seq::text)::text FROM removed
            """)
    }

    /// Deletes every row of the cache's table, in one `DELETE` (other caches' tables are left alone),
    /// which sends one notification for every key when it deleted a row.
    ///
    /// - Throws: A database error or a timeout.
    public func removeAllEntries() async throws(PostgresCacheError) {
        let table = table.table
        let channel = notificationChannel
        let payload = notificationPrefix("remove", nil) + "0"
        // A data-modifying WITH runs to completion whatever the query reads of it, so EXISTS reads one row
        // and every row is deleted.
        try await database.execute(
            "remove all",
            """
            WITH removed AS (DELETE FROM \(unescaped: table) RETURNING 1)
            SELECT pg_notify(\(channel), \(payload))::text WHERE EXISTS (SELECT FROM removed)
            """)
    }
}
