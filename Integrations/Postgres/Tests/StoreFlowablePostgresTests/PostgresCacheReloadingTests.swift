import PostgresNIO
import StoreFlowable
import StoreFlowablePostgres
import StoreFlowableTesting
import Synchronization
import Testing

/// `listenForChanges(reloading:)`: what one instance writes reaches the subscribers of another. Each
/// instance here is what a process has (its own cache object, store and manager, on one table); the
/// multi-process tests repeat this with separate processes.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheReloadingTests {
    /// One instance: a cache object, its stores, and the listener keeping them current.
    final class Instance: Sendable {
        let cache: PostgresCache<Int, String>
        let stores: KeyedStore<PostgresCache<Int, String>>
        let originCalls = CallCounter()
        let events = Recorder<PostgresCacheEvent>()
        let clock = ManualClock()
        private let listener: Mutex<Task<Void, Never>?> = Mutex(nil)

        init(client: PostgresClient, name: String, listening: Bool = true) async throws {
            let events = events
            cache = try await PostgresCache<Int, String>(name: name, client: client, events: events.record)
            let calls = originCalls
            let cache = cache
            stores = KeyedStore(cache: cache) { key in "origin-\(key)-\(calls.increment())" }
            guard listening else { return }
            let stores = stores
            let clock = clock
            listener.withLock {
                $0 = Task {
                    await cache.listenForChanges(
                        reloading: stores,
                        retry: PostgresCacheListenerRetry(baseDelay: .seconds(1), maxDelay: .seconds(1), jitter: .none),
                        clock: clock)
                }
            }
            try await waitUntilConnected(1)
        }

        /// Waits until the listener reported `count` connections.
        func waitUntilConnected(_ count: Int) async throws {
            try await events.wait("listener connected \(count) times") { events in
                events.filter { if case .listenerConnected = $0 { true } else { false } }.count >= count
            }
        }

        func stop() async {
            let running = listener.withLock { $0 }
            running?.cancel()
            await running?.value
        }
    }

    /// Runs `body` with two listening instances on a new table, B subscribed to key 1 and showing the
    /// origin's first value, then stops both.
    func withTwoListeningInstances(
        _ body: @Sendable (Instance, Instance, StateRecorder<String>) async throws -> Void
    ) async throws {
        try await withClient { client in
            let name = uniqueName()
            try await PostgresCacheSchema.migrate(name: name, client: client)
            let a = try await Instance(client: client, name: name)
            let b = try await Instance(client: client, name: name)
            let watched = StateRecorder(b.stores[1].publish())
            try await watched.waitForLatest { $0.isCompleted && $0.content == "origin-1-1" }
            try await body(a, b, watched)
            watched.cancel()
            await a.stop()
            await b.stop()
        }
    }

    @Test func anUpdateThroughOneInstanceReachesTheOthersSubscribersWithoutAnOriginCall() async throws {
        try await withTwoListeningInstances { a, b, watched in
            await a.stores[1].update(newData: "edited by a")
            let latest = try await watched.waitForLatest { $0.content == "edited by a" }
            #expect(latest.isCompleted)
            #expect(a.originCalls.value == 0)
            #expect(b.originCalls.value == 1)
        }
    }

    @Test func anInvalidationThroughOneInstanceRefetchesTheOthersSubscribers() async throws {
        try await withTwoListeningInstances { a, b, watched in
            try await a.stores[1].invalidate()
            let latest = try await watched.waitForLatest { $0.isCompleted && $0.content == "origin-1-2" }
            #expect(latest.content == "origin-1-2")
            #expect(watched.states.contains { $0.isLoading && $0.content == "origin-1-1" })
        }
    }

    @Test func aClearThroughOneInstanceRefetchesTheOthersSubscribers() async throws {
        try await withTwoListeningInstances { a, b, watched in
            await a.stores[1].clear()
            let latest = try await watched.waitForLatest { $0.isCompleted && $0.content != "origin-1-1" }
            // One of the two instances fetched again: a's own clear refetches for nobody (it has no subscriber).
            #expect(latest.content == "origin-1-2")
        }
    }

    @Test func anInstancesOwnWritesDoNotReloadIt() async throws {
        try await withClient { client in
            let name = uniqueName()
            try await PostgresCacheSchema.migrate(name: name, client: client)
            let a = try await Instance(client: client, name: name)
            let watched = StateRecorder(a.stores[1].publish())
            try await watched.waitForLatest { $0.isCompleted }
            await a.stores[1].update(newData: "mine")
            try await watched.waitForLatest { $0.content == "mine" }
            // A write by another object on the same table is heard; the instance's own one was not.
            let other = try await Instance(client: client, name: name, listening: false)
            await other.stores[1].update(newData: "theirs")
            try await watched.waitForLatest { $0.content == "theirs" }
            let contents = watched.states.compactMap(\.content)
            #expect(contents.filter { $0 == "mine" }.count == 1)
            watched.cancel()
            await a.stop()
        }
    }

    @Test func aTerminatedListenerReloadsEveryTrackedKeyAfterReconnecting() async throws {
        try await withClient { client in
            let name = uniqueName()
            try await PostgresCacheSchema.migrate(name: name, client: client)
            let a = try await Instance(client: client, name: name, listening: false)
            let b = try await Instance(client: client, name: name)
            let watched = StateRecorder(b.stores[1].publish())
            try await watched.waitForLatest { $0.isCompleted && $0.content == "origin-1-1" }
            let backend = try await listeningBackend(client, channel: b.cache.notificationChannel)
            try await execute(client, "SELECT pg_terminate_backend(\(backend)::int4)")
            try await b.events.wait("disconnected") { events in
                events.contains { if case .listenerDisconnected = $0 { true } else { false } }
            }
            await b.clock.sleepers(atLeast: 1)
            // Written while b's listener is down: the notification is lost.
            await a.stores[1].update(newData: "written during the gap")
            b.clock.advance(by: .seconds(1))
            try await b.waitUntilConnected(2)
            // The reconnection reloads every tracked key, so the gap's write reaches the subscriber.
            let latest = try await watched.waitForLatest { $0.content == "written during the gap" }
            #expect(latest.isCompleted)
            #expect(b.originCalls.value == 1)
            watched.cancel()
            await b.stop()
        }
    }

    @Test func aChangeArrivingWhileAFetchIsInFlightNeverLeavesTheFetchedValueFresh() async throws {
        try await withClient { client in
            let name = uniqueName()
            try await PostgresCacheSchema.migrate(name: name, client: client)
            let a = try await Instance(client: client, name: name, listening: false)
            let b = try await Instance(client: client, name: name)
            let slowOrigin = OpenGate()
            let started = OpenGate()
            let slow = KeyedStore(cache: b.cache, manager: b.stores.manager) { key in
                started.open()
                await slowOrigin.wait()
                return "fetched before the change"
            }
            let caller = Task { try await slow[5].requireData() }
            await started.wait()
            await a.stores[5].update(newData: "changed elsewhere")
            // b hears the change while its fetch runs: the fetch is dropped, and b's caller gets the
            // changed value read from the cache.
            #expect(try await caller.value == "changed elsewhere")
            slowOrigin.open()
            let entry = try await b.cache.entry(forKey: 5)
            #expect(entry?.value == "changed elsewhere")
            await b.stop()
        }
    }
}

extension LoadingState {
    /// Whether the state is `.completed`.
    var isCompleted: Bool {
        if case .completed = self { true } else { false }
    }
}
