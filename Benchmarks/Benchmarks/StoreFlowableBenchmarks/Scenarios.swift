import Benchmark
import StoreFlowable

// Long-lived states that some benchmarks set up once (in their `setup`) and measure round after round.

/// `subscribers` tasks each iterating a `publish()` stream of one key; a round updates the key and
/// waits until every subscriber saw the new value.
final class StoreFanOut: @unchecked Sendable {
    // Safety: `round` and `tasks` are only touched by the benchmark's own iterations, which run one
    // after the other; the subscriber tasks touch only `arrivals`, which is thread-safe.
    let subscribers: Int
    let store: AnyStoreFlowable<User>
    let arrivals = Arrivals()
    /// Whether a round writes with `update(_:)` (a transform of the cached value) instead of
    /// `update(newData:)`.
    let usesTransform: Bool
    private var round = 0
    private var tasks: [Task<Void, Never>] = []

    init(subscribers: Int, usesTransform: Bool = false) {
        self.subscribers = subscribers
        self.usesTransform = usesTransform
        store = ActorCacheCallback(
            key: 1, manager: FlowableDataStateManager(), cache: ActorUserCache(preloaded: [User(id: 1)]),
            origin: CountingOrigin()
        ).create()
    }

    /// Starts the subscribers and waits until each saw the cached value.
    func setUp() async {
        arrivals.begin(round: 0, expecting: subscribers)
        for _ in 0..<subscribers {
            let (store, arrivals) = (store, arrivals)
            tasks.append(
                Task {
                    for await state in store.publish() {
                        if case .completed(let user, _, _) = state { arrivals.arrive(round: user.version) }
                    }
                })
        }
        await arrivals.waitForAll()
    }

    /// One measured round: `update(newData:)` (or `update(_:)`) until every subscriber saw the new value.
    func measureRound(_ benchmark: Benchmark) async {
        round += 1
        arrivals.begin(round: round, expecting: subscribers)
        let newUser = User(id: 1, version: round)
        benchmark.startMeasurement()
        if usesTransform {
            do {
                try await store.update { current in
                    var user = current ?? newUser
                    user.version = newUser.version
                    return user
                }
            } catch {
                benchmark.error("update(_:) failed: \(error)")
            }
        } else {
            await store.update(newData: newUser)
        }
        await arrivals.waitForAll()
        benchmark.stopMeasurement()
    }

    func tearDown() async {
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        tasks = []
    }
}

/// The baseline of ``StoreFanOut``: `consumers` tasks each iterating an `AsyncStream` of its own
/// (newest value buffered, as `publish()` buffers); a round yields the new value into every stream and
/// waits until every consumer saw it.
final class StreamFanOut: @unchecked Sendable {
    // Safety: as for StoreFanOut.
    let consumers: Int
    let arrivals = Arrivals()
    private var round = 0
    private var continuations: [AsyncStream<User>.Continuation] = []
    private var tasks: [Task<Void, Never>] = []

    init(consumers: Int) {
        self.consumers = consumers
    }

    func setUp() async {
        arrivals.begin(round: 0, expecting: consumers)
        for _ in 0..<consumers {
            let (stream, continuation) = AsyncStream.makeStream(of: User.self, bufferingPolicy: .bufferingNewest(1))
            continuations.append(continuation)
            let arrivals = arrivals
            tasks.append(
                Task {
                    for await user in stream { arrivals.arrive(round: user.version) }
                })
        }
        let first = User(id: 1)
        for continuation in continuations { continuation.yield(first) }
        await arrivals.waitForAll()
    }

    func measureRound(_ benchmark: Benchmark) async {
        round += 1
        arrivals.begin(round: round, expecting: consumers)
        let newUser = User(id: 1, version: round)
        benchmark.startMeasurement()
        for continuation in continuations { continuation.yield(newUser) }
        await arrivals.waitForAll()
        benchmark.stopMeasurement()
    }

    func tearDown() async {
        for continuation in continuations { continuation.finish() }
        for task in tasks { await task.value }
        continuations = []
        tasks = []
    }
}

/// Waits until `manager` tracks no key any more (the unsubscriptions run in tasks of their own).
func waitUntilIdle<Key>(_ manager: FlowableDataStateManager<Key>) async {
    while await manager.trackedKeyCount > 0 {
        try? await Task.sleep(for: .microseconds(100))
    }
}
