import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import Testing

/// Writes of one key by two instances that race: the row's `seq` tells which committed last.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheWriteRaceTests {
    /// An upsert that waited for another writer's row lock draws its `seq` after that writer: the
    /// row's `seq` grows in commit order. (It used to keep the number drawn for the insert, before the
    /// wait: the later write then carried the smaller number.)
    @Test func aWriteThatWaitedForAnotherWritersRowLockIsNumberedAfterIt() async throws {
        try await withClient { client in
            let cache = try await makeCache(client)
            let table = "storeflowable_cache_" + cache.name
            try await cache.setEntry(CacheEntry(value: "first", storedAt: cache.clock.now), forKey: 1)
            let (theirs, ours) = try await withClient { other in
                try await other.withConnection { connection in
                    // Another instance's write of key 1 (encoded `1`), in a transaction that holds the row.
                    try await run(connection, "BEGIN")
                    try await run(
                        connection,
                        "SELECT 1 FROM \(unescaped: table) WHERE key = convert_to('1', 'UTF8') FOR UPDATE")
                    // This cache's write draws a number for its insert, then waits for the row.
                    let write = Task {
                        try await cache.setEntry(CacheEntry(value: "ours", storedAt: cache.clock.now), forKey: 1)
                    }
                    try await waitUntil(client, "the write waits for the row") { client in
                        try await backends(client, on: table, waitingForLock: true) >= 1
                    }
                    var theirs: Int64 = 0
                    let update: PostgresQuery = """
                        UPDATE \(unescaped: table) SET value = convert_to('"theirs"', 'UTF8'),
                            seq = nextval('storeflowable_seq') WHERE key = convert_to('1', 'UTF8') RETURNING seq
                        """
                    for try await seq in try await connection.query(update, logger: connection.logger)
                        .decode(Int64.self)
                    {
                        theirs = seq
                    }
                    try await run(connection, "COMMIT")
                    try await write.value
                    let ours = try await scalar(
                        client, "SELECT seq FROM \(unescaped: table) WHERE key = convert_to('1', 'UTF8')")
                    return (theirs, ours)
                }
            }
            #expect(try await cache.entry(forKey: 1)?.value == "ours")
            let seq = try #require(ours)
            #expect(seq > theirs, "the row written last has the larger seq")
        }
    }
}

/// Runs `statement` on `connection`, discarding its rows.
///
/// - Parameters:
///   - connection: A connection of the test's own.
///   - statement: The statement.
/// - Throws: What postgres-nio throws.
private func run(_ connection: PostgresConnection, _ statement: PostgresQuery) async throws {
    for try await _ in try await connection.query(statement, logger: connection.logger) {}
}
