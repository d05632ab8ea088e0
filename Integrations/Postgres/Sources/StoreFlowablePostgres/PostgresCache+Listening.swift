import PostgresNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PostgresCache {
    /// Listens for the changes that other cache objects on this table commit, in this process or
    /// another, and hands each to `onChange`, until the calling task is cancelled.
    ///
    /// ```swift
    /// group.addTask {
    ///     await users.listenForChanges { change in
    ///         switch change {
    ///         case .key(let id, _): await refresh(id)   // read it again from the cache
    ///         case .keyHash, .all: await refreshAll()
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// **Connection.** The listener takes one connection from the cache's client for as long as it
    /// listens (count it in the pool's `maximumConnections`), sends `LISTEN` on the cache's channel
    /// (``notificationChannel``) and runs nothing else on it but a heartbeat: every ``timeout`` on
    /// `clock`, but at most once a second (a cache with a timeout under a second asks every second), a
    /// `SELECT 1` that must be answered within ``timeout``. Each write through a
    /// ``PostgresCache`` notifies that channel in its own statement, so a change arrives once it is
    /// committed, and never for a write that failed, was rolled back or changed nothing. Notifications
    /// of this cache object (its ``instanceID``) are skipped; a payload that is not a cache's, or whose
    /// key the coder cannot decode, is skipped and reported as
    /// ``PostgresCacheEvent/malformedNotification(payload:reason:)``.
    ///
    /// **The gap rule.** Right after each `LISTEN` succeeds, first when it starts and again after every
    /// reconnection, the listener reports ``PostgresCacheEvent/listenerConnected(channel:)`` and
    /// delivers ``PostgresCacheChange/all``: what was committed before it listened (while it was
    /// starting, or disconnected) was not notified to it, so anything may have changed.
    ///
    /// **Failures.** When the connection fails (the server restarted, the backend was terminated, the
    /// network broke), when it stops answering (the heartbeat got no answer: a host that vanished or a
    /// network that drops packets closes nothing, and a connection that only listens sends nothing
    /// that TCP could give up on), or when connecting and listening fail or take longer than the
    /// cache's ``timeout`` (measured on `clock`; while the server is down, the pool keeps a request for
    /// a connection waiting for up to a minute), the listener reports
    /// ``PostgresCacheEvent/listenerDisconnected(error:attempt:retryAfter:)``, sleeps on `clock` for
    /// the backoff of `retry`, and tries again, for ever: it never throws (a `clock` whose `sleep`
    /// throws although the task was not cancelled is waited on with the continuous clock). A
    /// connection that stopped answering (`LISTEN` or the heartbeat in time) is closed, never handed
    /// back to the pool.
    ///
    /// **Order and back-pressure.** `onChange` is awaited before the next change is handed over, in
    /// the order PostgreSQL delivered the notifications (the order their writes committed). A slow
    /// handler delays later changes, which wait in memory meanwhile: none is dropped. It is called on
    /// a child task of the listener's, never concurrently with itself.
    ///
    /// **Cancellation.** Cancelling the calling task ends the listener promptly, whether it is
    /// connecting, listening or waiting for its backoff: it stops listening (postgres-nio sends
    /// `UNLISTEN` before the connection goes back to the pool) and returns. A running `onChange` is
    /// awaited first, with its task cancelled.
    ///
    /// - Parameters:
    ///   - retry: The backoff between reconnections; ``PostgresCacheListenerRetry/default`` (500 ms,
    ///     doubling up to 30 s, with jitter) by default.
    ///   - clock: The clock that the backoff sleeps on and that measures the connect timeout and the
    ///     heartbeat (its interval, at least a second, and its answer's deadline); the continuous clock
    ///     by default. Tests pass a manual clock and advance it.
    ///   - onChange: Receives each change, one at a time; ``PostgresCacheChange/all`` after each
    ///     `LISTEN`.
    public func listenForChanges(
        retry: PostgresCacheListenerRetry = .default,
        clock: some Clock<Duration> = ContinuousClock(),
        onChange: @escaping @Sendable (PostgresCacheChange<Key>) async -> Void
    ) async {
        var failures = 0
        while !Task.isCancelled {
            let session = await listenOnce(clock: clock, onChange: onChange)
            if Task.isCancelled { return }
            if session.listened { failures = 0 }
            failures += 1
            let delay = Self.sleepable(retry.delay(afterFailures: failures))
            report(.listenerDisconnected(error: session.failure, attempt: failures, retryAfter: delay))
            guard await Self.wait(delay, on: clock) else { return }  // cancelled
        }
    }

    /// Sleeps `duration` on `clock`: the listener's backoff and its deadlines.
    ///
    /// A clock's `sleep` throws when the task is cancelled. Should it throw anything else (a clock that
    /// cannot sleep), the wait happens on the continuous clock instead: the listener neither stops nor
    /// retries without waiting because of its clock.
    ///
    /// - Parameters:
    ///   - duration: How long to wait.
    ///   - clock: The listener's clock.
    /// - Returns: `false` when the task was cancelled, `true` once the time has passed.
    static func wait(_ duration: Duration, on clock: some Clock<Duration>) async -> Bool {
        do {
            try await clock.sleep(for: duration)
            return true
        } catch {
            if Task.isCancelled { return false }
        }
        do {
            try await ContinuousClock().sleep(for: duration)
            return true
        } catch {
            return false
        }
    }

    /// The hash a ``PostgresCacheChange/keyHash(_:version:)`` carries for `key`: the 64-bit FNV-1a hash
    /// of its encoded bytes.
    ///
    /// A pure computation: safe from any task, concurrently.
    ///
    /// - Parameter key: A key of this cache.
    /// - Returns: The hash of its bytes by the cache's coder.
    /// - Throws: ``PostgresCacheError/encodingFailed(_:)`` when the coder cannot encode the key.
    public func keyHash(forKey key: Key) throws(PostgresCacheError) -> UInt64 {
        PostgresCacheNotification.fnv1a(try encodedKey(key))
    }

    /// How one session with a connection ended.
    private enum SessionOutcome: Sendable {
        /// `LISTEN` succeeded in time.
        case listening
        /// The connect deadline passed before `LISTEN` succeeded.
        case timedOut
        /// The connect deadline was cancelled: the session ended first.
        case deadlineCancelled
        /// The session ended: whether it listened, and why it ended.
        case ended(listened: Bool, failure: String)
    }

    /// Takes a connection, listens on the channel and delivers changes until the connection fails or
    /// the task is cancelled; gives up when `LISTEN` has not succeeded within ``timeout`` on `clock`.
    ///
    /// The session and its connect deadline are two child tasks: the deadline sleeps on `clock` until
    /// the session signals that it listens (and then stops sleeping), or, when the time is up, closes
    /// the session's connection, if it has one, and cancels the session. Taking the connection waits
    /// in the pool while the server is down (up to a minute, the pool's circuit breaker), which the
    /// deadline bounds. A connection that did not answer `LISTEN` in time is closed rather than handed
    /// back to the pool with `LISTEN` pending, where the next statement would wait behind it.
    ///
    /// - Parameters:
    ///   - clock: The clock of the connect deadline and of the heartbeat.
    ///   - onChange: Receives the changes.
    /// - Returns: Whether `LISTEN` succeeded, and why the session ended (unless cancelled).
    private func listenOnce(
        clock: some Clock<Duration>,
        onChange: @escaping @Sendable (PostgresCacheChange<Key>) async -> Void
    ) async -> (listened: Bool, failure: String) {
        let signal = ListeningSignal()
        let held = HeldConnection()
        let deadline = Self.sleepable(timeout)
        return await withTaskGroup(of: SessionOutcome.self) { group in
            group.addTask {
                let (listened, failure) = await self.session(
                    signal: signal, held: held, clock: clock, onChange: onChange)
                return .ended(listened: listened, failure: failure)
            }
            group.addTask {
                await withTaskGroup(of: SessionOutcome.self) { timer in
                    timer.addTask { await Self.wait(deadline, on: clock) ? .timedOut : .deadlineCancelled }
                    timer.addTask {
                        await signal.wait()
                        return .listening
                    }
                    let first = await timer.next() ?? .deadlineCancelled
                    timer.cancelAll()
                    return first
                }
            }
            var timedOut = false
            while let outcome = await group.next() {
                switch outcome {
                case .listening, .deadlineCancelled:
                    continue
                case .timedOut:
                    timedOut = true
                    // Before the cancellation, so that the session gives back a connection that the pool
                    // already dropped.
                    await held.close()
                    group.cancelAll()
                case .ended(let listened, let failure):
                    // The deadline waits for the signal: give it, so that it stops sleeping.
                    signal.signal()
                    group.cancelAll()
                    if timedOut && !listened {
                        return (false, PostgresCacheError.timedOut(operation: "listen", after: timeout).description)
                    }
                    return (listened, failure)
                }
            }
            return (false, "the listener's session ended without an outcome")
        }
    }

    /// One session: takes a connection, listens, delivers `.all` and then each notification's change,
    /// while the heartbeat checks that the connection still answers.
    ///
    /// - Parameters:
    ///   - signal: Given once `LISTEN` succeeded.
    ///   - held: Where the session keeps its connection, for the deadline and the heartbeat.
    ///   - clock: The heartbeat's clock.
    ///   - onChange: Receives the changes.
    /// - Returns: Whether `LISTEN` succeeded, and why the session ended.
    private func session(
        signal: ListeningSignal, held: HeldConnection, clock: some Clock<Duration>,
        onChange: @escaping @Sendable (PostgresCacheChange<Key>) async -> Void
    ) async -> (listened: Bool, failure: String) {
        let channel = notificationChannel
        var listened = false
        do {
            try await database.client.withConnection { connection in
                guard held.hold(connection) else {
                    // The connect deadline passed while the pool leased it: close it before the pool gets
                    // it back, and send nothing on it.
                    connection.close().whenComplete { _ in }
                    _ = try? await connection.closeFuture.get()
                    throw CancellationError()
                }
                defer { held.release() }
                do {
                    try await connection.listen(on: channel) { notifications in
                        listened = true
                        signal.signal()
                        report(.listenerConnected(channel: channel))
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask { await self.heartbeat(held, connection, clock: clock) }
                            await onChange(.all)
                            for try await notification in notifications {
                                if let change = change(from: notification.payload) { await onChange(change) }
                            }
                            group.cancelAll()
                        }
                    }
                    if !Task.isCancelled { throw SessionEnded() }
                } catch {
                    // Unless cancelled, the connection failed (or LISTEN did, or the server stopped
                    // sending): close it, and wait until its close is complete before the pool gets it
                    // back. The pool learns of a close in a callback on the close future, registered
                    // before this wait's, so it no longer counts the connection as usable; postgres-nio
                    // 1.33's pool otherwise may lease the dead connection to the next request (seen
                    // after `pg_terminate_backend`: the cache's next write failed or hung).
                    if !Task.isCancelled {
                        _ = try? await connection.close()
                        _ = try? await connection.closeFuture.get()
                    }
                    // Cancelled as the heartbeat closed the connection: given back once the close is
                    // complete all the same.
                    await held.releaseOnceClosed()
                    throw error
                }
                await held.releaseOnceClosed()
            }
            return (listened, "the listener stopped")
        } catch is SessionEnded {
            return (listened, held.reason ?? "the server ended the notifications")
        } catch {
            return (listened, held.reason ?? PostgresCacheDatabase.failure("listen", error).description)
        }
    }

    /// While the session listens: every ``timeout`` on `clock`, but no more often than
    /// ``minimumHeartbeatInterval`` (once a second), sends `SELECT 1` on its connection, and closes the
    /// connection when no answer comes within ``timeout`` or the query fails.
    ///
    /// The answer's deadline stays the cache's ``timeout``, as for any statement, also when it is shorter
    /// than the interval: the floor only keeps a cache with a short timeout (say 10 ms, for statements
    /// that must answer fast or not at all) from sending a statement every few milliseconds on a
    /// connection that only listens.
    ///
    /// A listening connection sends nothing on its own, so a server or network that stopped answering
    /// without closing the connection (a host that vanished, a partition, a backend that hangs) would
    /// otherwise go unnoticed for ever: TCP gives up only on data it could not deliver. Closing the
    /// connection fails its notifications, which ends the session, and the listener reconnects.
    ///
    /// - Parameters:
    ///   - held: The session's connection, closed with the reason.
    ///   - connection: The listening connection.
    ///   - clock: The clock of the interval and of the answer's deadline.
    private func heartbeat(_ held: HeldConnection, _ connection: PostgresConnection, clock: some Clock<Duration>)
        async
    {
        let interval = Self.sleepable(max(timeout, Self.minimumHeartbeatInterval))
        let answerDeadline = Self.sleepable(timeout)
        while await Self.wait(interval, on: clock) {
            let answer = await withTaskGroup(of: HeartbeatAnswer.self) { group in
                group.addTask {
                    do {
                        return try await connection.rowsIfOpen("SELECT 1") == nil ? .failed("closed") : .answered
                    } catch {
                        return .failed(PostgresCacheDatabase.failure("listen", error).description)
                    }
                }
                group.addTask { await Self.wait(answerDeadline, on: clock) ? .unanswered : .cancelled }
                let first = await group.next() ?? .cancelled
                if case .answered = first {
                    group.cancelAll()
                } else {
                    // Also fails the query that got no answer, which the group waits for.
                    await held.close(because: first.reason(after: timeout))
                    group.cancelAll()
                }
                return first
            }
            guard case .answered = answer else { return }
        }
    }

    /// The shortest time between two heartbeats of a listener (see
    /// ``listenForChanges(retry:clock:onChange:)``): one second, whatever the cache's ``timeout``.
    static var minimumHeartbeatInterval: Duration { .seconds(1) }

    /// The notifications ended without an error while the listener was not cancelled.
    private struct SessionEnded: Error {}

    /// How the heartbeat's `SELECT 1` ended.
    private enum HeartbeatAnswer: Sendable {
        /// The connection answered.
        case answered
        /// No answer came in time.
        case unanswered
        /// The query failed, for this reason.
        case failed(String)
        /// The session ended first.
        case cancelled

        /// Why the listener closed the connection, or `nil` when the session ended first.
        ///
        /// - Parameter timeout: How long the answer was waited for.
        /// - Returns: The failure the listener reports.
        func reason(after timeout: Duration) -> String? {
            switch self {
            case .answered, .cancelled: nil
            case .unanswered: PostgresCacheError.timedOut(operation: "heartbeat", after: timeout).description
            case .failed(let reason): "heartbeat failed: \(reason)"
            }
        }
    }

    /// `duration`, at most 2³² seconds (136 years): a longer sleep would overflow the clock's deadline
    /// (`.seconds(.max)` is a natural way to ask for "no limit").
    ///
    /// - Parameter duration: A timeout or backoff.
    /// - Returns: The duration, capped.
    private static func sleepable(_ duration: Duration) -> Duration {
        min(duration, .seconds(Int64(1) << 32))
    }

    /// The change a notification's payload announces.
    ///
    /// - Parameter payload: The notification's text.
    /// - Returns: The change, or `nil` for a notification of this cache object or a malformed one
    ///   (reported).
    private func change(from payload: String) -> PostgresCacheChange<Key>? {
        let message: PostgresCacheNotification.Message
        do {
            message = try PostgresCacheNotification.parse(payload)
        } catch {
            report(.malformedNotification(payload: String(payload.prefix(200)), reason: error.reason))
            return nil
        }
        guard message.instanceID != instanceID else { return nil }
        switch message.target {
        case .all:
            return .all
        case .keyHash(let hash):
            return .keyHash(hash, version: message.version)
        case .key(let bytes):
            do {
                return .key(try coder.decodeKey(from: bytes), version: message.version)
            } catch {
                report(.malformedNotification(payload: String(payload.prefix(200)), reason: "key: \(error)"))
                return nil
            }
        }
    }
}
