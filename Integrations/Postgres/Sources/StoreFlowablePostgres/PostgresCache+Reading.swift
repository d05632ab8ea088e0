import PostgresNIO
public import StoreFlowable

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One row of a cache table as read, before its value is decoded.
struct PostgresCacheRow: Sendable {
    /// The encoded value.
    var value: Data
    /// When the entry was stored.
    var storedAt: CacheTime
    /// The invalidation mark.
    var isInvalidated: Bool
    /// The value format the writer used.
    var format: Int32
    /// The write's sequence number: a rewrite of the key changes it.
    var seq: Int64
}

extension PostgresCache {
    /// Reads the entry of `key` from its row.
    ///
    /// A row written with another value format, a row past the policy's lifetime and a row whose value
    /// the coder cannot decode are deleted (unless rewritten meanwhile), reported to `events`, and read
    /// as misses. One `SELECT` by primary key, plus a `DELETE` for such a row.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry as stored (its value, stored time to the nanosecond and invalidation mark),
    ///   or `nil`.
    /// - Throws: ``PostgresCacheError/encodingFailed(_:)`` if the coder cannot encode `key`;
    ///   ``PostgresCacheError/databaseFailed(operation:sqlState:message:)`` or
    ///   ``PostgresCacheError/timedOut(operation:after:)`` when the database fails or does not answer
    ///   (a failed cleanup of a row that is a miss is reported to `events` instead).
    public func entry(forKey key: Key) async throws(PostgresCacheError) -> CacheEntry<Value>? {
        let keyBytes = try encodedKey(key)
        guard claims.isTrackingReads else { return try await readEntry(keyBytes).0 }
        // A miss or a value that is not fresh is what a store's fetch follows: a single flight of this
        // cache compares the row read here with the one its claim finds. A fresh value is a hit: a fetch
        // after it (a refresh) follows no miss. A read that this object's own write of the key may have
        // overlapped is not remembered: it may have found the row before that write.
        let writesBefore = claims.writes(of: keyBytes)
        let (entry, seq) = try await readEntry(keyBytes)
        if let entry, freshness(of: entry) == .fresh {
            claims.forgetRead(keyBytes)
        } else {
            claims.noteRead(keyBytes, seq: seq, at: clock.now, writesBefore: writesBefore)
        }
        return entry
    }

    /// Reads the entry of `keyBytes` from its row, and the row's sequence number (see
    /// ``entry(forKey:)``, which this is without remembering the read for a single flight).
    ///
    /// - Parameter keyBytes: The encoded key.
    /// - Returns: The entry, `nil` for none (also for a row that is a miss and was deleted), and the
    ///   sequence number of the row read, `nil` for no row.
    /// - Throws: What ``entry(forKey:)`` throws, but for the key's encoding.
    func readEntry(_ keyBytes: Data) async throws(PostgresCacheError) -> (CacheEntry<Value>?, seq: Int64?) {
        let table = table.table
        let found = try await database.query(
            "read",
            "SELECT value, stored_at, invalidated, format, seq FROM \(unescaped: table) WHERE key = \(keyBytes)"
        ) { rows in
            var found: PostgresCacheRow?
            for row in rows {
                let (value, storedAt, invalidated, format, seq) = try row.decode(
                    (Data, Int64, Bool, Int32, Int64).self)
                found = PostgresCacheRow(
                    value: value, storedAt: CacheTime(nanosecondsSince1970: storedAt), isInvalidated: invalidated,
                    format: format, seq: seq)
            }
            return found
        }
        guard let row = found else { return (nil, nil) }
        // The key as text only for the events of a row that is a miss: a hit builds no string.
        guard row.format == valueFormat else {
            await discard(
                keyBytes, seq: row.seq,
                reporting: .removedOtherFormat(key: Self.printable(keyBytes), format: Int(row.format)))
            return (nil, row.seq)
        }
        if policy.isPastLifetime(storedAt: row.storedAt, now: clock.now) {
            await discard(keyBytes, seq: row.seq, reporting: .removedExpiredEntry(key: Self.printable(keyBytes)))
            return (nil, row.seq)
        }
        let value: Value
        do {
            value = try coder.decodeValue(from: row.value)
        } catch {
            await discard(
                keyBytes, seq: row.seq,
                reporting: .removedUndecodableEntry(key: Self.printable(keyBytes), reason: "\(error)"))
            return (nil, row.seq)
        }
        return (CacheEntry(value: value, storedAt: row.storedAt, isInvalidated: row.isInvalidated), row.seq)
    }

    /// Deletes the row of `keyBytes` if it still has sequence number `seq`, then reports `event` (or
    /// the failure).
    ///
    /// A row rewritten since it was read has a new number and is kept: the newer entry is not lost.
    ///
    /// It notifies nothing: the row is one that no cache of this value format would serve (another
    /// format, past its lifetime, undecodable), so deleting it changes no answer another instance gets
    /// from the table; a value another instance holds in memory came from a write that was notified.
    ///
    /// - Parameters:
    ///   - keyBytes: The encoded key.
    ///   - seq: The sequence number the row had when read.
    ///   - event: What to report once deleted.
    func discard(_ keyBytes: Data, seq: Int64, reporting event: PostgresCacheEvent) async {
        let table = table.table
        do throws(PostgresCacheError) {
            try await database.execute(
                "remove", "DELETE FROM \(unescaped: table) WHERE key = \(keyBytes) AND seq = \(seq)")
            report(event)
        } catch {
            report(.removeFailed(key: Self.printable(keyBytes), error: error.description))
        }
    }
}
