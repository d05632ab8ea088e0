import SQLiteNIO

extension SQLiteCache {
    /// Puts the file in WAL mode, sets the connection's lock wait, and creates or checks `table`, in one
    /// transaction, so that processes opening the same cache at once agree.
    ///
    /// Runs before the connection is shared, so the statements of the transaction are the only ones on it.
    /// A cancelled caller ends it with ``SQLiteCacheError/cancelled``; the transaction is then rolled back.
    static func prepare(_ table: SQLiteCacheTable, on connection: SQLiteConnection) async throws(SQLiteCacheError) {
        // SQLite answers "busy" without waiting when a wait could deadlock (two processes switching the
        // file to WAL, or both upgrading a read to a write, at the same moment): the preparation is then
        // tried again, for up to 10 seconds.
        let deadline = ContinuousClock.now + .seconds(10)
        var delay = Duration.milliseconds(5)
        while true {
            do throws(SQLiteCacheError) {
                return try await prepareOnce(table, on: connection)
            } catch {
                guard error.isBusy, ContinuousClock.now + delay < deadline else { throw error }
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    throw .cancelled
                }
                delay = min(delay * 2, .milliseconds(200))
            }
        }
    }

    private static func prepareOnce(_ table: SQLiteCacheTable, on connection: SQLiteConnection)
        async throws(SQLiteCacheError)
    {
        func run(_ sql: String, _ binds: [SQLiteData] = []) async throws(SQLiteCacheError) -> [SQLiteRow] {
            do {
                return try await connection.query(sql, binds)
            } catch {
                throw SQLiteCacheError(error, operation: "prepare table \(table.table)")
            }
        }
        // The connection waits for another connection's lock at most `lockPollMilliseconds` per statement,
        // sleeping (this replaces sqlite-nio's handler, which retries at once for ever); `query` tries
        // again, between waits, until `lockTimeout`.
        _ = try await run("PRAGMA busy_timeout = \(lockPollMilliseconds)")
        // WAL: readers never wait for the writer, and a killed writer's transaction is rolled back.
        // NORMAL is safe from corruption in WAL mode; only a power loss may lose the last commits.
        _ = try await run("PRAGMA journal_mode = WAL")
        _ = try await run("PRAGMA synchronous = NORMAL")
        _ = try await run("BEGIN IMMEDIATE")
        do throws(SQLiteCacheError) {
            try await check(table, run)
            _ = try await run("COMMIT")
        } catch {
            // In a task of its own: a cancelled caller's query would be dropped by sqlite-nio, and the
            // connection (closed next) would keep the file's write lock until then.
            await Task { _ = try? await connection.query("ROLLBACK") }.value
            throw error
        }
    }

    /// Creates `table`, its index, its counter and their schema row when missing; otherwise checks the
    /// table and makes any of the others that is missing.
    private static func check(
        _ table: SQLiteCacheTable,
        _ run: (String, [SQLiteData]) async throws(SQLiteCacheError) -> [SQLiteRow]
    ) async throws(SQLiteCacheError) {
        _ = try await run(SQLiteCacheTable.createSchemaTable, [])
        _ = try await run(SQLiteCacheTable.createCounterTable, [])
        let recorded = try await run(SQLiteCacheTable.schemaVersion, [.text(table.table)]).first?.column("version")
        let exists =
            try await run(SQLiteCacheTable.tableExists, [.text(table.table)]).first?.column("found")?.integer ?? 0
        switch (recorded?.integer, exists > 0) {
        case (nil, false):
            _ = try await run(table.create, [])
            _ = try await run(
                SQLiteCacheTable.recordSchemaVersion,
                [.text(table.table), .integer(SQLiteInt64(SQLiteCacheTable.layoutVersion))])
        case (nil, true):
            throw .unexpectedTable(table.table)
        case (let version?, _) where version != SQLiteCacheTable.layoutVersion:
            throw .schemaMismatch(table: table.table, found: Int(version), expected: SQLiteCacheTable.layoutVersion)
        case (_, false):
            // Recorded but gone (dropped by hand): made again.
            _ = try await run(table.create, [])
        case (_, true):
            let columns = try await run(table.tableInfo, []).compactMap { $0.column("name")?.string }
            guard columns == SQLiteCacheTable.columns else { throw .unexpectedTable(table.table) }
        }
        _ = try await run(table.createSeqIndex, [])
        _ = try await run(table.createCounter, [.text(table.table)])
        for trigger in table.createCounterTriggers { _ = try await run(trigger, []) }
    }
}

extension SQLiteCacheError {
    /// `error`, thrown by sqlite-nio during `operation`, as the cache reports it: a cancelled caller (whose
    /// query sqlite-nio dropped) is ``cancelled``, anything else ``databaseFailed(operation:underlying:)``.
    init(_ error: any Error, operation: String) {
        self = error is CancellationError ? .cancelled : .databaseFailed(operation: operation, underlying: error)
    }

    /// Whether SQLite answered that the file is locked by another connection.
    var isBusy: Bool {
        guard case .databaseFailed(_, let underlying) = self, let error = underlying as? SQLiteError else {
            return false
        }
        switch error.reason {
        case .busy, .locked, .busyInRecovery, .busyInSnapshot, .busyTimeout, .lockedBySharedCache: return true
        default: return false
        }
    }
}
