import PostgresNIO

/// The cache's way to the database: each operation runs on the client's pool within the cache's
/// timeout, and every failure becomes a ``PostgresCacheError``.
///
/// postgres-nio never fails a query for a server that is down on its own: the pool queues the request
/// while it retries connecting (with a growing back-off) and fails it only when its circuit breaker
/// trips, after a minute that `PostgresClient` does not let you change. The timeout bounds that wait.
struct PostgresCacheDatabase: Sendable {
    /// The connection pool; its `run()` must be running.
    let client: PostgresClient
    /// The longest time one operation may take, from asking the pool for a connection to the last row.
    let timeout: Duration

    /// Runs `statement` within ``timeout`` and reads its rows with `read`.
    ///
    /// The statement goes to an open connection of the pool (see
    /// ``PostgresNIO/PostgresClient/rowsOnOpenConnection(_:holding:onAnswer:)``): one the pool hands out after it
    /// closed gets nothing and is given back, so that a statement never waits for a connection that is
    /// gone. The rows are read to the end before `read` gets them. When the timeout passes while the
    /// statement waits for its answer, its connection is closed (the pool then opens another one): a
    /// server or a network that stopped answering keeps none of the pool's connections. The server
    /// may still run the statement until it notices the close; its own `statement_timeout` bounds that.
    ///
    /// A caller cancelled before its statement got a connection (while the pool had none free, or
    /// before it called) returns ``PostgresCacheError/cancelled(operation:)`` at once, and its
    /// statement is never sent: a connection the pool hands over afterwards goes back to it untouched.
    /// Cancelled once the statement has its connection, the caller still returns at once, but the
    /// statement may be sent, and apply.
    ///
    /// - Parameters:
    ///   - operation: What the cache is doing, for the error (`read`, `write`, …).
    ///   - statement: The statement, built on the statement's task (binding a value may throw).
    ///   - read: Makes the result of the rows; it runs on the caller's task.
    /// - Returns: What `read` returned.
    /// - Throws: ``PostgresCacheError/databaseFailed(operation:sqlState:message:)`` when the statement,
    ///   the connection or `read` failed, ``PostgresCacheError/timedOut(operation:after:)`` when no
    ///   answer came in time, ``PostgresCacheError/cancelled(operation:)`` when the task was cancelled
    ///   before the answer came.
    func query<Output: Sendable>(
        _ operation: String, _ statement: @escaping @autoclosure @Sendable () throws -> PostgresQuery,
        read: @escaping @Sendable ([PostgresRow]) throws -> Output
    ) async throws(PostgresCacheError) -> Output {
        let client = client
        let held = HeldConnection()
        let timeout = timeout
        // A caller cancelled first leaves its statement running: it still gives up its connection at
        // the deadline, else a cancelled statement on a server that stopped answering would keep it.
        // The rows reach the caller from the connection's event loop as soon as they come: the
        // statement's task gives the connection back meanwhile, and the caller does not wait for it.
        let outcome = await withDeadline(
            timeout,
            pastDeadlineAfterCancellation: {
                // In a task of its own: the timer runs on an event loop, maybe the connection's.
                Task { Self.giveUp(held, in: client, within: timeout) }
            },
            // The statement's task, unstructured, is cancelled only once the caller resumed; a connection
            // the pool hands over before then must not get the statement.
            whenCallerCancelled: { held.abandon() },
            deliveringEarly: { deliver in
                try await client.rowsOnOpenConnection(try statement(), holding: held, onAnswer: deliver)
            }
        )
        switch outcome {
        case .finished(.success(let rows)):
            do {
                return try read(rows)
            } catch let error as PostgresCacheError {
                throw error
            } catch {
                throw Self.failure(operation, error)
            }
        case .finished(.failure(let error as PostgresCacheError)):
            throw error
        case .finished(.failure(let error)):
            let failure = Self.failure(operation, error)
            // The server ended the statement at its own `statement_timeout` or `lock_timeout`, which
            // Docs/ServerCaches.md tells users to set no longer than the cache's timeout: the same
            // outcome as the cache's own deadline, and the statement did not apply.
            if case .databaseFailed(_, "57014", _) = failure { throw .timedOut(operation: operation, after: timeout) }
            if case .databaseFailed(_, "55P03", _) = failure { throw .timedOut(operation: operation, after: timeout) }
            throw failure
        case .timedOut:
            // The statement's connection, if it got one, is closed: left leased to a statement that may
            // never be answered (a server or network that stopped answering), it would hold a place of
            // the pool for as long, and enough of them would leave none for anyone.
            Self.giveUp(held, in: client, within: timeout)
            throw .timedOut(operation: operation, after: timeout)
        case .cancelled:
            throw .cancelled(operation: operation)
        }
    }

    /// Closes the connection a statement that was given up waits on, if it holds one, and makes the pool
    /// replace it.
    ///
    /// - Parameters:
    ///   - held: The statement's connection.
    ///   - client: Its pool.
    ///   - timeout: The cache's timeout, bounding the replacement's request.
    private static func giveUp(_ held: HeldConnection, in client: PostgresClient, within timeout: Duration) {
        if let closing = held.startClosing() { replaceAfterClose(closing, in: client, within: timeout) }
    }

    /// Makes the pool replace `connection` once its close is complete, for the statements already
    /// waiting for a connection.
    ///
    /// postgres-nio 1.33's pool opens no connection when a leased one closes (its state machine keeps
    /// only the minimum count then), not even for requests already queued: with every connection
    /// leased, they would wait until a new request comes, or for ever. A new request makes the pool
    /// open one (the queue is served first), so one is made once the close is complete; it gives its
    /// connection back at once, and gives up after `timeout`. It runs in a task of its own (one per
    /// statement that timed out), so that the statement's caller returns at once.
    ///
    /// - Parameters:
    ///   - connection: The connection being closed.
    ///   - client: Its pool.
    ///   - timeout: The longest the request waits.
    private static func replaceAfterClose(
        _ connection: PostgresConnection, in client: PostgresClient, within timeout: Duration
    ) {
        Task {
            _ = try? await connection.closeFuture.get()
            _ = await withDeadline(timeout) { try await client.withConnection { _ in } }
        }
    }

    /// Runs `statement` within ``timeout``, discarding its rows (see ``query(_:_:read:)``).
    ///
    /// - Parameters:
    ///   - operation: What the cache is doing, for the error.
    ///   - statement: The statement, built on the statement's task.
    /// - Throws: As ``query(_:_:read:)``.
    func execute(
        _ operation: String, _ statement: @escaping @autoclosure @Sendable () throws -> PostgresQuery
    ) async throws(PostgresCacheError) {
        try await query(operation, try statement()) { _ in () }
    }

    /// The cache error for a database error.
    ///
    /// A `PSQLError`'s own `description` is a fixed sentence (postgres-nio hides the details so that
    /// they do not reach end users by accident), and its `debugDescription` includes the statement
    /// with its bound values (the cache's keys and values). The message is built from its code, the
    /// server's message and the underlying connection error instead; not the server's `DETAIL`, which
    /// for a constraint violation is "Failing row contains (…)", the row's key and value.
    ///
    /// - Parameters:
    ///   - operation: What the cache was doing.
    ///   - error: What postgres-nio threw.
    /// - Returns: ``PostgresCacheError/databaseFailed(operation:sqlState:message:)``.
    static func failure(_ operation: String, _ error: any Error) -> PostgresCacheError {
        guard let error = error as? PSQLError else {
            // The pool's own errors (`ConnectionPoolError`: cancelled, shut down, circuit breaker) are
            // not mapped to `PSQLError` by postgres-nio 1.33.
            return .databaseFailed(operation: operation, sqlState: nil, message: String(reflecting: error))
        }
        var parts = ["PSQLError(code: \(error.code)"]
        let sqlState = error.serverInfo?[.sqlState]
        if let sqlState { parts.append("sqlState: \(sqlState)") }
        if let message = error.serverInfo?[.message] { parts.append("message: \(message)") }
        if let underlying = error.underlying { parts.append("underlying: \(String(reflecting: underlying))") }
        return .databaseFailed(operation: operation, sqlState: sqlState, message: parts.joined(separator: ", ") + ")")
    }
}
