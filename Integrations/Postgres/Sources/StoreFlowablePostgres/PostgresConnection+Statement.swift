import PostgresNIO

extension PostgresConnection {
    /// Sends `query` if the connection is open, deciding on its event loop, and collects its rows.
    ///
    /// postgres-nio writes a query to the connection's channel without a promise for the write. Once
    /// the channel has closed and NIO has removed its handlers (a moment after the close), such a write
    /// is dropped, and the query is never answered, not even with an error. postgres-nio 1.33's pool
    /// learns of a close only when that removal is done, and meanwhile may lease the closed connection:
    /// after a server restart, a statement sent through the pool then waits for an answer that never
    /// comes. Here the check and the write run in one job of the event loop, where a channel that is
    /// still active still has its handlers: a query written then is answered or failed, never dropped.
    ///
    /// - Parameters:
    ///   - query: The statement.
    ///   - onAnswer: Called once, on the connection's event loop, with the statement's rows or its
    ///     failure as soon as they come, before this returns; not when the connection was closed (nothing
    ///     was sent), but with the failure when the event loop could not take the statement (it had shut
    ///     down), which is what this then throws.
    /// - Returns: Its rows, or `nil` when the connection was closed, in which case nothing was sent.
    /// - Throws: What postgres-nio reports for the statement or the connection.
    func rowsIfOpen(
        _ query: PostgresQuery, onAnswer: (@Sendable (Result<[PostgresRow], any Error>) -> Void)? = nil
    ) async throws -> [PostgresRow]? {
        let logger = logger
        let sent: EventLoopFuture<[PostgresRow]?> = eventLoop.flatSubmit {
            guard !self.isClosed else { return self.eventLoop.makeSucceededFuture(nil) }
            let result: EventLoopFuture<PostgresQueryResult> = self.query(query, logger: logger)
            return result.map { Optional($0.rows) }
        }
        if let onAnswer {
            sent.whenComplete { result in
                switch result {
                case .success(let rows?): onAnswer(.success(rows))
                case .success(nil): break
                case .failure(let error): onAnswer(.failure(error))
                }
            }
        }
        return try await sent.get()
    }
}

extension PostgresClient {
    /// Runs `query` on an open connection of the pool and returns its rows.
    ///
    /// A connection that the pool hands out after it closed (see
    /// ``PostgresNIO/PostgresConnection/rowsIfOpen(_:onAnswer:)``) gets nothing: it is given back once its close is
    /// complete, which is when the pool drops it, and the statement goes to another connection. Each
    /// closed connection is handed out once at most, so this takes as many leases as the pool had
    /// closed connections to hand out, and then waits for an open one as any request does. It ends
    /// when the task is cancelled (taking a connection then throws).
    ///
    /// The connection the statement is sent on is recorded in `held` while the statement runs, so that
    /// whoever gives up on the statement (its deadline) can close the connection instead of leaving it
    /// leased to a statement that may never be answered. Once `held` was closed or abandoned (its
    /// caller was cancelled: ``HeldConnection/abandon()``), no statement is sent: a connection leased
    /// then, which the check finds in hand before anything is written, goes back to the pool untouched,
    /// and this throws `CancellationError`. The task this runs on is not the caller's (see
    /// ``withDeadline(_:watchdog:pastDeadlineAfterCancellation:whenCallerCancelled:deliveringEarly:)``):
    /// it is cancelled only once the caller resumed, and the pool may hand it a connection before
    /// then, so its own cancellation is not the check.
    ///
    /// - Parameters:
    ///   - query: The statement.
    ///   - held: Where the connection is recorded while the statement runs.
    ///   - onAnswer: Called on the connection's event loop with the statement's rows or its failure as
    ///     soon as they come, before the connection is given back and this returns (see
    ///     ``PostgresNIO/PostgresConnection/rowsIfOpen(_:onAnswer:)``).
    /// - Returns: Its rows.
    /// - Throws: What postgres-nio reports for the statement, the connection or the pool;
    ///   `CancellationError` when `held` was closed or abandoned before a connection was in hand.
    func rowsOnOpenConnection(
        _ query: PostgresQuery, holding held: HeldConnection,
        onAnswer: (@Sendable (Result<[PostgresRow], any Error>) -> Void)? = nil
    ) async throws -> [PostgresRow] {
        while true {
            let rows: [PostgresRow]? = try await withConnection { connection in
                guard held.hold(connection) else { throw CancellationError() }
                // Forgotten before the pool gets the connection back, so that a late close never reaches
                // a connection another statement leased; when whoever gave up on the statement closed
                // it meanwhile (the statement failed, or succeeded just as its deadline passed), given
                // back only once the close is complete. postgres-nio 1.33's pool, given back a
                // connection whose close is under way, leases it again, and sometimes never replaces
                // it: every later statement waits for a connection that never comes.
                let rows: [PostgresRow]?
                do {
                    rows = try await connection.rowsIfOpen(query, onAnswer: onAnswer)
                } catch {
                    await held.releaseOnceClosed()
                    throw error
                }
                await held.releaseOnceClosed()
                if let rows { return rows }
                // Given back only once the pool knows the connection closed, or it would lease it again.
                _ = try? await connection.closeFuture.get()
                return nil
            }
            if let rows { return rows }
        }
    }
}
