import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import Testing

/// The change listener's connection: it reconnects after its backoff (on its own clock, which the tests
/// advance) when its backend is terminated or the server restarts, delivers `.all` after every `LISTEN`,
/// and returns promptly when its task is cancelled, at any moment, leaving nothing listening.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheListenerTests {
    @Test func aTerminatedConnectionIsReconnectedAfterTheBackoffAndDeliversAll() async throws {
        try await withClient { client in
            let name = uniqueName()
            let events = Recorder<PostgresCacheEvent>()
            let writer = try await makeCache(client, name: name)
            let reader = try await makeCache(client, name: name, events: events.record)
            let heard = TestListener(reader)
            try await heard.waitUntilListening()
            #expect(events.elements == [.listenerConnected(channel: reader.notificationChannel)])
            let backend = try await listeningBackend(client, channel: reader.notificationChannel)

            try await execute(client, "SELECT pg_terminate_backend(\(backend)::int4)")
            try await events.wait("disconnected") { $0.contains(where: Self.isDisconnected(attempt: 1, .seconds(1))) }
            await heard.clock.sleepers(atLeast: 1)
            // Written while nobody listens: this notification is lost, the `.all` after reconnecting covers it.
            let time = CacheTime(nanosecondsSince1970: 1)
            try await writer.setEntry(CacheEntry(value: "missed", storedAt: time), forKey: 1)
            #expect(heard.changes.elements == [.all])
            heard.clock.advance(by: .seconds(1))
            try await heard.waitUntilListening(2)
            #expect(events.elements.filter { $0 == .listenerConnected(channel: reader.notificationChannel) }.count == 2)

            try await writer.setEntry(CacheEntry(value: "heard", storedAt: time), forKey: 2)
            let changes = try await heard.changes.wait(forCount: 3)
            #expect(changes.count == 3 && changes[0] == .all && changes[1] == .all)
            guard case .key(2, _) = changes[2] else {
                Issue.record("expected key 2 after reconnecting, got \(changes)")
                return
            }
            await heard.stop()
        }
    }

    @Test func aRestartedServerIsRetriedWithBackoffUntilTheListenerIsBack() async throws {
        let server = try await TestPostgresServer.launch()
        try await withClient(server, connectTimeout: .seconds(1)) { client in
            let name = uniqueName()
            let events = Recorder<PostgresCacheEvent>()
            let writer = try await makeCache(client, name: name, timeout: .seconds(3))
            let reader = try await makeCache(client, name: name, timeout: .seconds(3), events: events.record)
            let heard = TestListener(reader)
            try await heard.waitUntilListening()

            try await server.stop()
            try await events.wait("disconnected") { $0.contains(where: Self.isDisconnected(attempt: 1, .seconds(1))) }
            await heard.clock.sleepers(atLeast: 1)
            heard.clock.advance(by: .seconds(1))
            // The second attempt waits in the pool for a connection; the cache's timeout, on the
            // listener's clock, ends it. The listener then waits twice as long, on its clock: it makes no
            // attempt until the clock moves.
            await heard.clock.sleepers(atLeast: 1)
            heard.clock.advance(by: .seconds(3))
            try await events.wait("second failure") { $0.contains(where: Self.isDisconnected(attempt: 2, .seconds(2))) }
            await heard.clock.sleepers(atLeast: 1)
            #expect(heard.clock.sleeperCount == 1)
            #expect(heard.changes.elements == [.all])
            let failure = events.elements.last.map(String.init(describing:)) ?? ""
            #expect(failure.contains("listen got no answer from the database within 3.0 seconds"))

            try await server.start()
            heard.clock.advance(by: .seconds(2))
            // The pool reconnects on its own backoff; the listener's request waits for it (its deadline
            // does not pass: the clock stays).
            try await heard.waitUntilListening(2)
            let delays = events.elements.compactMap { event -> Duration? in
                if case .listenerDisconnected(_, _, let retryAfter) = event { retryAfter } else { nil }
            }
            #expect(delays == [.seconds(1), .seconds(2)])

            try await writer.setEntry(
                CacheEntry(value: "back", storedAt: CacheTime(nanosecondsSince1970: 1)), forKey: 1)
            let changes = try await heard.changes.wait(forCount: 3)
            guard case .key(1, _) = changes[2] else {
                Issue.record("expected key 1 after the restart, got \(changes)")
                return
            }
            await heard.stop()
        }
        try await server.stop()
    }

    @Test func cancellingTheListenerWhileItListensReturnsPromptlyAndUnlistens() async throws {
        try await withClient { client in
            let reader = try await makeCache(client)
            let heard = TestListener(reader)
            try await heard.waitUntilListening()
            let backend = try await listeningBackend(client, channel: reader.notificationChannel)
            let elapsed = await heard.stop()
            #expect(elapsed < .seconds(2))
            // The connection went back to the pool after `UNLISTEN`, or was closed.
            try await waitUntil(client, "backend \(backend) stopped listening") { client in
                let listening = try await scalar(
                    client, "SELECT count(*) FROM pg_stat_activity WHERE pid = \(backend) AND query LIKE 'LISTEN %'")
                return listening == 0
            }
        }
    }

    @Test func cancellingTheListenerDuringItsBackoffReturnsPromptly() async throws {
        try await withClient { client in
            let events = Recorder<PostgresCacheEvent>()
            let reader = try await makeCache(client, events: events.record)
            let heard = TestListener(reader)
            try await heard.waitUntilListening()
            let backend = try await listeningBackend(client, channel: reader.notificationChannel)
            try await execute(client, "SELECT pg_terminate_backend(\(backend)::int4)")
            try await events.wait("disconnected") { $0.contains(where: Self.isDisconnected(attempt: 1, .seconds(1))) }
            await heard.clock.sleepers(atLeast: 1)
            let elapsed = await heard.stop()
            #expect(elapsed < .seconds(2))
            #expect(heard.clock.sleeperCount == 0)
            #expect(heard.changes.elements == [.all])
        }
    }

    @Test func cancellingTheListenerBeforeItListensReturnsPromptly() async throws {
        try await withClient { client in
            let reader = try await makeCache(client)
            let heard = TestListener(reader)
            let elapsed = await heard.stop()
            #expect(elapsed < .seconds(2))
            #expect(heard.changes.elements.count <= 1)
        }
        // While connecting to a server that is down: the request waits in the pool's queue (for up to a
        // minute, or the cache's timeout) and is cancelled there.
        let server = try await TestPostgresServer.launch()
        try await withClient(server, connectTimeout: .seconds(1)) { client in
            let events = Recorder<PostgresCacheEvent>()
            let reader = try await makeCache(client, events: events.record)
            let heard = TestListener(reader)
            try await heard.waitUntilListening()
            try await server.stop()
            try await events.wait("disconnected") { $0.contains(where: Self.isDisconnected(attempt: 1, .seconds(1))) }
            await heard.clock.sleepers(atLeast: 1)
            heard.clock.advance(by: .seconds(1))
            await heard.clock.sleepers(atLeast: 1)  // the connect deadline: it is connecting
            let elapsed = await heard.stop()
            #expect(elapsed < .seconds(2))
            #expect(events.elements.count == 2)  // connected, disconnected: no second attempt ended
        }
    }

    @Test func aClockWhoseSleepThrowsNeitherEndsTheListenerNorItsRetries() async throws {
        try await withClient { client in
            let events = Recorder<PostgresCacheEvent>()
            let reader = try await makeCache(client, events: events.record)
            let changes = Recorder<PostgresCacheChange<Int>?>()
            // `nil` when the listener returned, which it must only do when cancelled.
            let listening = Task {
                await reader.listenForChanges(
                    retry: PostgresCacheListenerRetry(baseDelay: .milliseconds(10), jitter: .none),
                    clock: ThrowingClock()
                ) { change in
                    changes.record(change)
                }
                changes.record(nil)
            }
            try await changes.wait(forCount: 1)
            let backend = try await listeningBackend(client, channel: reader.notificationChannel)
            try await execute(client, "SELECT pg_terminate_backend(\(backend)::int4)")
            // The backoff's sleep throws: the listener waits on the continuous clock instead, and listens
            // again. It used to return at once, without a word.
            let seen = try await changes.wait("listening again, or returned") { $0.count >= 2 }
            #expect(seen[0..<2] == [.all, .all])
            #expect(events.elements.contains(where: Self.isDisconnected(attempt: 1, .milliseconds(10))))
            listening.cancel()
            await listening.value
            #expect(changes.elements.last == .some(nil))
        }
    }

    @Test func aListeningConnectionThatStopsAnsweringIsClosedByTheHeartbeatAndReplaced() async throws {
        try await withClient { client in
            let name = uniqueName()
            let events = Recorder<PostgresCacheEvent>()
            let writer = try await makeCache(client, name: name)
            let reader = try await makeCache(client, name: name, timeout: .seconds(2), events: events.record)
            let heard = TestListener(reader)
            try await heard.waitUntilListening()
            // The backend stops answering; its connection stays open, so nothing fails on its own.
            let frozen = try FrozenBackend(try await listeningBackend(client, channel: reader.notificationChannel))
            defer { frozen.thaw() }

            // Every 2 seconds of its clock (the cache's timeout) the listener asks `SELECT 1`, and closes
            // the connection when no answer comes within 2 seconds more. Without this nothing ever
            // happened: the listener waited for notifications for ever.
            try await heard.clock.waitForSleeper("the heartbeat's interval")
            heard.clock.advance(by: .seconds(2))
            try await heard.clock.waitForSleeper("the heartbeat's answer")
            heard.clock.advance(by: .seconds(2))
            try await events.wait("disconnected") { $0.contains(where: Self.isDisconnected(attempt: 1, .seconds(1))) }
            let failure = events.elements.last.map(String.init(describing:)) ?? ""
            #expect(failure.contains("heartbeat got no answer from the database within 2.0 seconds"), "\(failure)")

            // It reconnects after its backoff, on another connection, and hears changes again.
            try await heard.clock.waitForSleeper("the backoff")
            heard.clock.advance(by: .seconds(1))
            try await heard.waitUntilListening(2)
            let entry = CacheEntry(value: "heard", storedAt: CacheTime(nanosecondsSince1970: 1))
            try await writer.setEntry(entry, forKey: 7)
            try await heard.changes.wait("key 7") { $0.contains { if case .key(7, _) = $0 { true } else { false } } }
            await heard.stop()
        }
    }

    @Test func theHeartbeatOfACacheWithAShortTimeoutAsksOncePerSecondAtMost() async throws {
        try await withClient { client in
            let patient = try await makeCache(client)
            let reader = try await openWithShortTimeout(client, name: patient.name, timeout: .milliseconds(100))
            let clock = SleepRecordingClock()
            let changes = Recorder<PostgresCacheChange<Int>>()
            let listening = Task {
                await reader.listenForChanges(clock: clock) { change in changes.record(change) }
            }
            defer { listening.cancel() }
            try await changes.wait(forCount: 1)  // `.all`: it listens
            let backend = try await listeningBackend(client, channel: reader.notificationChannel)
            // Two sleeps started, one still sleeping: the connect deadline (100 ms) ended when `LISTEN`
            // succeeded, and the heartbeat waits for its interval.
            let sleeps = try await clock.sleeps.wait("the heartbeat's interval") { sleeps in
                SleepRecordingClock.started(sleeps).count >= 2 && SleepRecordingClock.sleeping(sleeps).count == 1
            }
            let interval = SleepRecordingClock.started(sleeps).last?.length
            #expect(interval == .seconds(1), "the heartbeat's interval: \(String(describing: interval))")

            // The cache's timeout passes, and more: the heartbeat still sleeps. Without a floor its
            // interval was the timeout, and it sent `SELECT 1` every 100 ms on the listening connection
            // (every 10 ms with a timeout of 10 ms).
            clock.manual.advance(by: .milliseconds(100))
            #expect(clock.manual.sleeperCount == 1)
            clock.manual.advance(by: .milliseconds(890))
            #expect(clock.manual.sleeperCount == 1)

            // At 1 s it asks, waits for the answer for the cache's timeout (the clock stands still
            // meanwhile), gets it, and waits for the next interval.
            clock.manual.advance(by: .milliseconds(10))
            let asked = try await clock.sleeps.wait("the heartbeat's answer, then its next interval") { sleeps in
                SleepRecordingClock.started(sleeps).count >= 4 && SleepRecordingClock.sleeping(sleeps).count == 1
            }
            let lengths = SleepRecordingClock.started(asked).map(\.length)
            #expect(lengths.suffix(2) == [.milliseconds(100), .seconds(1)], "\(lengths)")
            // The listening backend's last statement.
            let heartbeats = try await scalar(
                client, "SELECT count(*) FROM pg_stat_activity WHERE pid = \(backend) AND query = 'SELECT 1'")
            #expect(heartbeats == 1)
            #expect(changes.elements == [.all])
            listening.cancel()
            await listening.value
        }
    }

    @Test(.enabled(if: FrozenBackend.canSeeSockets, "needs /proc/net/tcp"))
    func aConnectionThatDoesNotAnswerListenInTimeIsClosedNotGivenBackToThePool() async throws {
        // A pool of one connection: the listener's, then the next statement's.
        try await withPoolOfOne { client in
            let events = Recorder<PostgresCacheEvent>()
            let cache = try await makeCache(client, timeout: .seconds(2), events: events.record)
            let connection = try await onlyConnection(client)
            let frozen = try FrozenBackend(connection.backend)
            defer { frozen.thaw() }

            let heard = TestListener(cache)
            // `LISTEN` reached the stopped backend: the listener holds the connection and waits.
            try await frozen.waitUntilSomethingIsUnread(
                serverPort: try await sharedServer().port, clientPort: Int(connection.port))
            try await heard.clock.waitForSleeper("the connect deadline")
            heard.clock.advance(by: .seconds(2))
            try await events.wait("disconnected") { $0.contains(where: Self.isDisconnected(attempt: 1, .seconds(1))) }

            // The connection was closed, not handed back with `LISTEN` pending: the next statement gets a
            // new one. It used to get the stopped one, and wait for its timeout behind `LISTEN`.
            #expect(try await cache.entry(forKey: 1) == nil)
            await heard.stop()
        }
    }

    /// Whether an event is the listener's `attempt`-th failure, followed by a wait of `retryAfter`.
    private static func isDisconnected(
        attempt: Int, _ retryAfter: Duration
    ) -> @Sendable (PostgresCacheEvent) -> Bool {
        { event in
            if case .listenerDisconnected(_, attempt, retryAfter) = event { true } else { false }
        }
    }
}

/// A clock that cannot sleep: every `sleep` throws at once, and not because the task was cancelled.
private struct ThrowingClock: Clock {
    /// What each sleep throws.
    struct CannotSleep: Error {}

    var now: ContinuousClock.Instant { ContinuousClock.now }
    var minimumResolution: Duration { ContinuousClock().minimumResolution }

    func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        throw CannotSleep()
    }
}
