import PostgresNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PostgresCache {
    /// Marks the entry of `key`, if any, as invalidated, keeping its value and timestamp: one `UPDATE`
    /// of the mark in place, atomic with respect to concurrent writes of the key.
    ///
    /// - Parameter key: The key to invalidate.
    /// - Throws: ``PostgresCacheError/encodingFailed(_:)``, a database error or a timeout.
    public func invalidateEntry(forKey key: Key) async throws(PostgresCacheError) {
        let keyBytes = try encodedKey(key)
        let table = table.table
        try await database.run("invalidate") { client in
            try await client.execute(
                "UPDATE \(unescaped: table) SET invalidated = true WHERE key = \(keyBytes) AND NOT invalidated")
        }
        await releaseClaim(afterWriting: keyBytes)
    }

    /// Marks every entry whose key satisfies `isIncluded` as invalidated.
    ///
    /// The keys of the rows not yet invalidated are listed with their sequence numbers, then decoded
    /// and passed to `isIncluded` with no connection held and no row locked. The chosen rows are then
    /// marked in one `UPDATE`, each only if its sequence number is unchanged: a key written again
    /// meanwhile holds a newer entry, which is not invalidated. A row whose key the coder cannot decode
    /// is deleted (unless rewritten meanwhile) and reported.
    ///
    /// - Parameter isIncluded: Chooses the keys to invalidate; called once per entry not yet
    ///   invalidated.
    /// - Throws: A database error or a timeout, from listing or marking.
    public func invalidateEntries(
        where isIncluded: @escaping @Sendable (Key) -> Bool
    ) async throws(PostgresCacheError) {
        let table = table.table
        let listed = try await database.run("list") { client in
            let rows = try await client.query("SELECT key, seq FROM \(unescaped: table) WHERE NOT invalidated")
            var listed: [(key: Data, seq: Int64)] = []
            for try await row in rows.decode((Data, Int64).self) { listed.append(row) }
            return listed
        }
        var chosenKeys: [ByteBuffer] = []
        var chosenSeqs: [Int64] = []
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
            if isIncluded(key) {
                chosenKeys.append(ByteBuffer(bytes: row.key))
                chosenSeqs.append(row.seq)
            }
        }
        guard !chosenKeys.isEmpty else { return }
        try await database.run("invalidate") { [chosenKeys, chosenSeqs] client in
            try await client.execute(
                """
                UPDATE \(unescaped: table) AS entry SET invalidated = true
                FROM unnest(\(chosenKeys)::bytea[], \(chosenSeqs)::int8[]) AS chosen(key, seq)
                WHERE entry.key = chosen.key AND entry.seq = chosen.seq
                """)
        }
    }
}
