import SQLiteNIO

extension SQLiteCache {
    /// Puts the file in WAL mode and creates or checks `table`, in one transaction, so that processes
    /// opening the same cache at once agree.
    ///
    /// Runs before the connection is shared, so the statements of the transaction are the only ones on it.
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
                try? await Task.sleep(for: delay)
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
                throw .databaseFailed(operation: "prepare table \(table.table)", underlying: error)
            }
        }
        // WAL: readers never wait for the writer, and a killed writer's transaction is rolled back.
        // NORMAL is safe from corruption in WAL mode; only a power loss may lose the last commits.
        _ = try await run("PRAGMA journal_mode = WAL")
        _ = try await run("PRAGMA synchronous = NORMAL")
        _ = try await run("BEGIN IMMEDIATE")
        do throws(SQLiteCacheError) {
            try await check(table, run)
            _ = try await run("COMMIT")
        } catch {
            _ = try? await run("ROLLBACK")
            throw error
        }
    }

    /// Creates `table` and its schema row when missing; otherwise checks both.
    private static func check(
        _ table: SQLiteCacheTable,
        _ run: (String, [SQLiteData]) async throws(SQLiteCacheError) -> [SQLiteRow]
    ) async throws(SQLiteCacheError) {
        _ = try await run(SQLiteCacheTable.createSchemaTable, [])
        let recorded = try await run(SQLiteCacheTable.schemaVersion, [.text(table.table)]).first?.column("version")
        let exists =
            try await run(SQLiteCacheTable.tableExists, [.text(table.table)]).first?.column("found")?.integer ?? 0
        switch (recorded?.integer, exists > 0) {
        case (nil, false):
            _ = try await run(table.create, [])
            _ = try await run(table.createSeqIndex, [])
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
            _ = try await run(table.createSeqIndex, [])
        case (_, true):
            let columns = try await run(table.tableInfo, []).compactMap { $0.column("name")?.string }
            guard columns == SQLiteCacheTable.columns else { throw .unexpectedTable(table.table) }
        }
    }
}

extension SQLiteCacheError {
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
