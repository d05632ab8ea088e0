import PostgresNIO
public import StoreFlowable

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PostgresCache {
    /// Stores `entry` under `key`, replacing any previous entry, in one upsert
    /// (`INSERT … ON CONFLICT (key) DO UPDATE`).
    ///
    /// The row keeps the entry's own `storedAt` (to the nanosecond) and invalidation mark, this cache's
    /// value format and a new sequence number. With a size limit, the oldest written rows may then be
    /// evicted, never this one.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - key: Its key.
    /// - Throws: ``PostgresCacheError/encodingFailed(_:)`` when the coder fails;
    ///   ``PostgresCacheError/entryTooLarge(bytes:sizeLimit:)`` when the encoded key and value are
    ///   larger than the size limit (the key's previous row is then deleted); a database error or
    ///   timeout. A failed eviction after the write is reported to `events` instead, since the entry
    ///   was stored.
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
        let seq = try await database.run("write") { client in
            let rows = try await client.query(
                """
                INSERT INTO \(unescaped: table) (key, value, stored_at, invalidated, format, size, seq)
                VALUES (\(keyBytes), \(valueBytes), \(storedAt), \(isInvalidated), \(format), \(rowSize), \
                nextval(\(sequence)))
                ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, stored_at = EXCLUDED.stored_at,
                    invalidated = EXCLUDED.invalidated, format = EXCLUDED.format, size = EXCLUDED.size,
                    seq = EXCLUDED.seq
                RETURNING seq
                """)
            var seq: Int64?
            for try await found in rows.decode(Int64.self) { seq = found }
            return seq
        }
        await releaseClaim(afterWriting: keyBytes)
        if let sizeLimit, let seq { await evict(toFit: sizeLimit, keeping: seq) }
    }

    /// Deletes the oldest written rows (lowest `seq`) until the rest fit in `sizeLimit`, keeping the
    /// row numbered `seq`; reports each eviction, or the failure.
    ///
    /// One statement: a window sum over the rows from the newest down marks every row past the limit.
    ///
    /// - Parameters:
    ///   - sizeLimit: The most bytes of keys and values the table may hold.
    ///   - seq: The number of the row just written, which is never evicted.
    func evict(toFit sizeLimit: Int, keeping seq: Int64) async {
        let table = table.table
        let limit = Int64(sizeLimit)
        do throws(PostgresCacheError) {
            let evicted = try await database.run("evict") { client in
                let rows = try await client.query(
                    """
                    DELETE FROM \(unescaped: table) AS entry
                    USING (SELECT key, seq, sum(size) OVER (ORDER BY seq DESC) AS total FROM \(unescaped: table))
                        AS ranked
                    WHERE entry.key = ranked.key AND entry.seq = ranked.seq AND ranked.total > \(limit)
                        AND entry.seq <> \(seq)
                    RETURNING entry.key, entry.size, entry.seq
                    """)
                var evicted: [(key: Data, size: Int32, seq: Int64)] = []
                for try await row in rows.decode((Data, Int32, Int64).self) { evicted.append(row) }
                // Oldest first, as they were chosen (RETURNING has no order).
                return evicted.sorted { $0.seq < $1.seq }
            }
            for row in evicted { report(.evicted(key: Self.printable(row.key), bytes: Int(row.size))) }
        } catch {
            report(.removeFailed(key: "(size-limit eviction)", error: error.description))
        }
    }

    /// Deletes the row of `key`, if any, in one `DELETE`.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: ``PostgresCacheError/encodingFailed(_:)``, a database error or a timeout.
    public func removeEntry(forKey key: Key) async throws(PostgresCacheError) {
        let keyBytes = try encodedKey(key)
        try await removeRow(keyBytes)
        await releaseClaim(afterWriting: keyBytes)
    }

    /// Deletes the row of `keyBytes`, if any.
    ///
    /// - Parameter keyBytes: The encoded key.
    /// - Throws: A database error or a timeout.
    func removeRow(_ keyBytes: Data) async throws(PostgresCacheError) {
        let table = table.table
        try await database.run("remove") { client in
            try await client.execute("DELETE FROM \(unescaped: table) WHERE key = \(keyBytes)")
        }
    }

    /// Deletes every row of the cache's table, in one `DELETE` (other caches' tables are left alone).
    ///
    /// - Throws: A database error or a timeout.
    public func removeAllEntries() async throws(PostgresCacheError) {
        let table = table.table
        try await database.run("remove all") { client in
            try await client.execute("DELETE FROM \(unescaped: table)")
        }
    }
}
