import PostgresNIO
import Synchronization

/// The connection a change listener's session or a cache statement holds, for whoever finds it
/// unresponsive: the listener's connect deadline (`LISTEN` got no answer in time) and heartbeat
/// (`SELECT 1` got none), and a statement's deadline, close it.
///
/// Closing fails whatever waits on the connection (`LISTEN`, the notifications, a statement), so the
/// holder gives it back as soon as the close is complete (``releaseOnceClosed()``), and a connection
/// that stopped answering is never handed back to the pool alive, where the next statement would queue
/// behind the unanswered one. A statement whose caller was cancelled before it had a connection is
/// abandoned (``abandon()``): the connection leased then is given back unused. A lock, not an actor:
/// closing and abandoning never suspend on it.
final class HeldConnection: Sendable {
    private struct State {
        /// The holder's connection, while it holds one.
        var connection: PostgresConnection?
        /// Why the connection was closed, when it was closed with a reason.
        var reason: String?
        /// Whether ``close(because:)`` or ``startClosing(because:)`` ran: a connection leased after it
        /// is not used.
        var isClosed = false
        /// Whether ``abandon()`` ran: a connection leased after it is not used.
        var isAbandoned = false
    }

    private let state = Mutex(State())

    /// Why the connection was closed by ``close(because:)`` with a reason, if it was.
    var reason: String? { state.withLock { $0.reason } }

    /// Whether ``close(because:)`` or ``startClosing(because:)`` ran.
    var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Records `connection` as the holder's, before anything is sent on it.
    ///
    /// When the connection was already closed (the deadline passed while the holder waited for the
    /// pool), or the holder abandoned (its caller was cancelled while it waited for the pool), the
    /// connection is not recorded: the caller must not use it (a statement gives it back to the pool
    /// untouched, and a listener closes it).
    ///
    /// - Parameter connection: The connection the holder leased.
    /// - Returns: Whether the holder may use the connection.
    func hold(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            guard !state.isClosed, !state.isAbandoned else { return false }
            state.connection = connection
            return true
        }
    }

    /// Refuses every connection leased from now on (``hold(_:)`` returns `false`): a statement's caller
    /// was cancelled, so a statement that has no connection yet is never sent. A connection already
    /// held is left alone: its statement may have been sent, and its deadline still bounds it.
    ///
    /// Never suspends and never calls out, so that it may run in a cancellation handler.
    func abandon() {
        state.withLock { $0.isAbandoned = true }
    }

    /// Forgets the connection: the holder is giving it back to the pool, which may lease it to anyone
    /// from then on, so it is not closed by this object any more.
    ///
    /// - Returns: The connection, when this object started closing it while it was held: its close is
    ///   under way, and the pool must get it back only once the close is complete (see
    ///   ``releaseOnceClosed()``).
    @discardableResult
    func release() -> PostgresConnection? {
        state.withLock { state in
            defer { state.connection = nil }
            return state.isClosed ? state.connection : nil
        }
    }

    /// Forgets the connection, and returns once a close this object started on it is complete.
    ///
    /// postgres-nio 1.33's pool learns of a close only when it is complete: given back a connection
    /// whose close is under way, it leases it to the next request (any user of the client, whose query
    /// then fails, or is never answered once NIO removed the channel's handlers), and may not replace
    /// it for the requests already waiting. This holds even when the statement succeeded just as its
    /// deadline closed the connection.
    func releaseOnceClosed() async {
        guard let closing = release() else { return }
        _ = try? await closing.closeFuture.get()
    }

    /// Closes the held connection, if any, and returns once its close is complete (the pool has then
    /// dropped it).
    ///
    /// - Parameter reason: Why, for the session's failure; the first reason given is kept.
    func close(because reason: String? = nil) async {
        guard let held = startClosing(because: reason) else { return }
        // `close()` returns at once for a connection already closing; its close future tells when the
        // close is complete.
        _ = try? await held.closeFuture.get()
    }

    /// Starts closing the held connection, if any, without waiting for the close to complete; a
    /// connection leased later is refused by ``hold(_:)``.
    ///
    /// - Parameter reason: Why; the first reason given is kept.
    /// - Returns: The connection being closed, `nil` when none was held.
    @discardableResult
    func startClosing(because reason: String? = nil) -> PostgresConnection? {
        // The close starts under the lock, so that it never reaches a connection the holder already
        // gave back to the pool (``release()`` takes the same lock); it does not call back into it.
        state.withLock { state -> PostgresConnection? in
            if state.reason == nil { state.reason = reason }
            state.isClosed = true
            guard let connection = state.connection else { return nil }
            connection.close().whenComplete { _ in }
            return connection
        }
    }
}
