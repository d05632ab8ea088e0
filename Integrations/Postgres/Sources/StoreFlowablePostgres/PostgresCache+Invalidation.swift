import PostgresNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PostgresCache {
    /// Marks the entry of `key`, if any, as invalidated, keeping its value and timestamp: one `UPDATE`
    /// of the mark in place, atomic with respect to concurrent writes of the key, which notifies the
    /// invalidation when it marked a row (not for a missing or already invalidated one).
    ///
    /// - Parameter key: The key to invalidate.
    /// - Throws: ``PostgresCacheError/encodingFailed(_:)``, a database error or a timeout.
    public func invalidateEntry(forKey key: Key) async throws(PostgresCacheError) {
        let keyBytes = try encodedKey(key)
        let table = table.table
        let channel = notificationChannel
        let note = notificationPrefix("invalidate", keyBytes)
        try await database.execute(
            "invalidate",
            """
            WITH marked AS (
                UPDATE \(unescaped: table) SET invalidated = true WHERE key = \(keyBytes) AND NOT invalidated
                RETURNING seq)
            SELECT pg_notify(\(channel), \(note) || seq::text)::text FROM marked
            """)
        await releaseClaim(afterWriting: keyBytes)
    }

    /// Marks every entry whose key satisfies `isIncluded` as invalidated.
    ///
    /// The keys of the rows not yet invalidated are listed with their sequence numbers, then decoded
    /// and passed to `isIncluded` with no connection held and no row locked. The chosen rows are then
    /// marked in one `UPDATE`, each only if its sequence number is unchanged and it is not marked yet: a
    /// key written again meanwhile holds a newer entry, which is not invalidated. The same statement
    /// notifies each row it marked, or, when more than 100 keys were chosen, sends one notification for
    /// every key if it marked any. A row whose key the coder cannot decode is deleted (unless rewritten
    /// meanwhile) and reported.
    ///
    /// - Parameter isIncluded: Chooses the keys to invalidate; called once per entry not yet
    ///   invalidated.
    /// - Throws: A database error or a timeout, from listing or marking.
    public func invalidateEntries(
        where isIncluded: @escaping @Sendable (Key) -> Bool
    ) async throws(PostgresCacheError) {
        let table = table.table
        let listed = try await database.query(
            "list", "SELECT key, seq FROM \(unescaped: table) WHERE NOT invalidated"
        ) { rows in
            try rows.map { row -> (key: Data, seq: Int64) in try row.decode((Data, Int64).self) }
        }
        var chosen: [(key: Data, seq: Int64)] = []
        for row in listed {
            let key: Key
            do {
                key = try coder.decodeKey(from: row.key)
            } catch {
                let event = PostgresCacheEvent.removedUndecodableEntry(
                    key: Self.printable(row.key), reason: "key: \(error)")
                await discard(row.key, seq: row.seq, reporting: event)
                continue
            }
            if isIncluded(key) { chosen.append(row) }
        }
        guard !chosen.isEmpty else { return }
        let chosenKeys = chosen.map { ByteBuffer(bytes: $0.key) }
        let chosenSeqs = chosen.map(\.seq)
        let channel = notificationChannel
        if chosen.count > PostgresCacheNotification.keyNotificationLimit {
            let payload = notificationPrefix("invalidate", nil) + "0"
            try await database.execute(
                "invalidate",
                """
                WITH marked AS (
                    UPDATE \(unescaped: table) AS entry SET invalidated = true
                    FROM unnest(\(chosenKeys)::bytea[], \(chosenSeqs)::int8[]) AS chosen(key, seq)
                    WHERE entry.key = chosen.key AND entry.seq = chosen.seq AND NOT entry.invalidated
                    RETURNING 1)
                SELECT pg_notify(\(channel), \(payload))::text WHERE EXISTS (SELECT FROM marked)
                """)
        } else {
            let notes = chosen.map { notificationPrefix("invalidate", $0.key) }
            try await database.execute(
                "invalidate",
                """
                WITH marked AS (
                    UPDATE \(unescaped: table) AS entry SET invalidated = true
                    FROM unnest(\(chosenKeys)::bytea[], \(chosenSeqs)::int8[], \(notes)::text[])
                        AS chosen(key, seq, note)
                    WHERE entry.key = chosen.key AND entry.seq = chosen.seq AND NOT entry.invalidated
                    RETURNING chosen.note, entry.seq)
                SELECT pg_notify(\(channel), note || seq::text)::text FROM marked
                """)
        }
    }
}
