import PostgresNIO
import Synchronization

/// The connection a change listener's session holds, for whoever finds it unresponsive: the connect
/// deadline (`LISTEN` got no answer in time) and the heartbeat (`SELECT 1` got none) close it.
///
/// Closing fails whatever waits on the connection (`LISTEN`, the notifications, a query), so the
/// session ends, and a connection that stopped answering is never handed back to the pool, where the
/// next statement would queue behind the unanswered one. A lock, not an actor: closing never suspends
/// on it.
final class ListenerConnection: Sendable {
    private struct State {
        /// The session's connection, while it holds one.
        var connection: PostgresConnection?
        /// Why the connection was closed, when the heartbeat closed it.
        var reason: String?
        /// Whether ``close(because:)`` ran: a connection the session leases after it is closed at once.
        var isClosed = false
    }

    private let state = Mutex(State())

    /// Why the connection was closed by ``close(because:)`` with a reason, if it was.
    var reason: String? { state.withLock { $0.reason } }

    /// Records `connection` as the session's, before anything is sent on it.
    ///
    /// When ``close(because:)`` already ran (the connect deadline passed while the session waited for
    /// the pool), the connection is not recorded: the caller must close it at once and not listen on it.
    ///
    /// - Parameter connection: The connection the session leased.
    /// - Returns: Whether the session may use the connection.
    func hold(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            guard !state.isClosed else { return false }
            state.connection = connection
            return true
        }
    }

    /// Forgets the connection: the session is giving it back.
    func release() {
        state.withLock { $0.connection = nil }
    }

    /// Closes the held connection, if any, and returns once its close is complete (the pool has then
    /// dropped it).
    ///
    /// - Parameter reason: Why, for the session's failure; the first reason given is kept.
    func close(because reason: String? = nil) async {
        // The close starts under the lock, so that it never reaches a connection the session already
        // gave back to the pool (``release()`` takes the same lock); it does not call back into it.
        let held = state.withLock { state -> PostgresConnection? in
            if state.reason == nil { state.reason = reason }
            state.isClosed = true
            guard let connection = state.connection else { return nil }
            connection.close().whenComplete { _ in }
            return connection
        }
        guard let held else { return }
        // `close()` returns at once for a connection already closing; its close future tells when the
        // close is complete.
        _ = try? await held.closeFuture.get()
    }
}
