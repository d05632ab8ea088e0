import Benchmark
import StoreFlowable

// Each benchmark of the store is paired with a baseline: the Swift primitive it is built on, measured
// in the same run and from the same kind of context (an async benchmark closure, which the package
// runs in a task of its own, off the main actor). `Benchmarks/ratios` prints each pair's ratio next to
// the target of issue 4; Docs/Performance.md has the table.
//
// Names: "<Group>.baseline.<what>" is a baseline, any other "<Group>.<what>" measures the store. Keep
// the names stable, and without spaces (the benchmark package 1.38 writes a threshold file with "_" for
// each space but looks for it with the space): Thresholds/ and Benchmarks/ratios refer to them.

/// Wall-clock time, and the allocations: count, and bytes allocated minus bytes freed (growth).
let timeAndMallocs: [BenchmarkMetric] = [.wallClock, .mallocCountTotal, .memoryLeakedBytes]

/// Memory benchmarks also report the bytes allocated.
let memoryMetrics: [BenchmarkMetric] = [.wallClock, .mallocCountTotal, .mallocBytesCount, .memoryLeakedBytes]

/// The configuration every benchmark uses, with the tolerance `thresholds check` allows on the p90 of
/// `mallocCountTotal` (raw counts per iteration, that is per 1,000 calls for the `.kilo` ones).
func configuration(
    scaling: BenchmarkScalingFactor = .one,
    metrics: [BenchmarkMetric] = timeAndMallocs,
    maxDuration: Duration = .seconds(1),
    maxIterations: Int = 100_000,
    warmupIterations: Int = 10,
    mallocTolerance: BenchmarkThresholds.AbsoluteThreshold = 0,
    mallocRelativeTolerance: BenchmarkThresholds.RelativeThreshold? = nil
) -> Benchmark.Configuration {
    let mallocThresholds: BenchmarkThresholds =
        if let mallocRelativeTolerance {
            .init(relative: [.p90: mallocRelativeTolerance])
        } else {
            .init(absolute: [.p90: mallocTolerance])
        }
    return .init(
        metrics: metrics,
        warmupIterations: warmupIterations,
        scalingFactor: scaling,
        maxDuration: maxDuration,
        maxIterations: maxIterations,
        thresholds: [.mallocCountTotal: mallocThresholds]
    )
}

let benchmarks: @Sendable () -> Void = {
    cacheHitBenchmarks()
    publishBenchmarks()
    updateBenchmarks()
    concurrentOriginBenchmarks()
    memoryBenchmarks()
    pagingBenchmarks()
    memoryCacheBenchmarks()
    concurrencyLimitBenchmarks()
    keyedStoreBenchmarks()
    diskCacheBenchmarks()
    sqliteCacheBenchmarks()
    postgresCacheBenchmarks()
    loaderBenchmarks()
    loadingStateBenchmarks()
    batchBenchmarks()
}

// MARK: 1. Cache hit

/// `getData()` and `requireData()` on a valid cache, 1,000 calls per iteration (results are per call).
///
/// Each iteration makes one call before the measurement starts: the first call deep enough in a new task
/// allocates that task's next allocator slab (one malloc of about 1 KB, freed with the task), a cost
/// per task, not per call. The loops are written out in each benchmark so that no closure call is
/// measured with them.
func cacheHitBenchmarks() {
    let config = configuration(scaling: .kilo, mallocTolerance: 0)
    let user = User(id: 42)

    let dictionaryActor = DictionaryActor(preloaded: [user])
    Benchmark("CacheHit.baseline.actorDictionaryRead", configuration: config) { benchmark in
        blackHole(await dictionaryActor.value(for: 42))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(await dictionaryActor.value(for: 42))
        }
    }

    // The user's own two calls on the README's actor cache, without a store: what the store's cache
    // hit must at least do.
    let actorCache = ActorUserCache(preloaded: [user])
    Benchmark("CacheHit.baseline.directRead.actorCache", configuration: config) { benchmark in
        blackHole(await actorCache.user(42))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let cached = await actorCache.user(42)
            blackHole(await actorCache.isStale(42) ? nil : cached)
        }
    }

    let lockedCache = LockedUserCache(preloaded: [user])
    Benchmark("CacheHit.baseline.directRead.lockedCache", configuration: config) { benchmark in
        blackHole(lockedCache.user(42))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let cached = lockedCache.user(42)
            blackHole(lockedCache.isStale(42) ? nil : cached)
        }
    }

    let actorOrigin = CountingOrigin()
    let actorStore = ActorCacheCallback(
        key: 42, manager: FlowableDataStateManager(), cache: actorCache, origin: actorOrigin
    ).create()
    Benchmark("CacheHit.getData.actorCache", configuration: config) { benchmark in
        blackHole(await actorStore.getData())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(await actorStore.getData())
        }
        benchmark.stopMeasurement()
        if actorOrigin.callCount != 0 { benchmark.error("a cache hit fetched from the origin") }
    }
    Benchmark("CacheHit.requireData.actorCache", configuration: config) { benchmark in
        blackHole(try await actorStore.requireData())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await actorStore.requireData())
        }
        benchmark.stopMeasurement()
        if actorOrigin.callCount != 0 { benchmark.error("a cache hit fetched from the origin") }
    }

    let lockedOrigin = CountingOrigin()
    let lockedStore = LockedCacheCallback(
        key: 42, manager: FlowableDataStateManager(), cache: lockedCache, origin: lockedOrigin
    ).create()
    Benchmark("CacheHit.getData.lockedCache", configuration: config) { benchmark in
        blackHole(await lockedStore.getData())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(await lockedStore.getData())
        }
        benchmark.stopMeasurement()
        if lockedOrigin.callCount != 0 { benchmark.error("a cache hit fetched from the origin") }
    }
    Benchmark("CacheHit.requireData.lockedCache", configuration: config) { benchmark in
        blackHole(try await lockedStore.requireData())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await lockedStore.requireData())
        }
        benchmark.stopMeasurement()
        if lockedOrigin.callCount != 0 { benchmark.error("a cache hit fetched from the origin") }
    }

    // The same store with an events observer set: each hit reports one `.cacheHit(.fresh)` event (to an
    // observer that only counts), against the store above, which has none.
    let observer = CountingObserver()
    let observedStore = LockedCacheCallback(
        key: 42, manager: FlowableDataStateManager(observer: observer), cache: lockedCache, origin: lockedOrigin
    ).create()
    Benchmark("CacheHit.requireData.lockedCache.observed", configuration: config) { benchmark in
        blackHole(try await observedStore.requireData())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await observedStore.requireData())
        }
        benchmark.stopMeasurement()
        if lockedOrigin.callCount != 0 { benchmark.error("a cache hit fetched from the origin") }
        if observer.count == 0 { benchmark.error("the observer saw no event") }
    }
}

// MARK: 2. publish() to the first completed state

/// One `publish()` stream per iteration, from the call to its first `.completed` state (valid cache,
/// so no fetch), vs one value handed from a new task to a consumer waiting on a new `AsyncStream`.
func publishBenchmarks() {
    let config = configuration(mallocTolerance: 4)

    Benchmark("Publish.baseline.asyncStreamOneHop", configuration: config) { benchmark in
        let user = User(id: 42)
        let (stream, continuation) = AsyncStream.makeStream(of: User.self, bufferingPolicy: .bufferingNewest(1))
        Task { continuation.yield(user) }
        for await value in stream {
            blackHole(value)
            break
        }
    }

    let origin = CountingOrigin()
    let store = ActorCacheCallback(
        key: 42, manager: FlowableDataStateManager(), cache: ActorUserCache(preloaded: [User(id: 42)]),
        origin: origin
    ).create()
    Benchmark("Publish.firstCompleted", configuration: config) { benchmark in
        for await state in store.publish() {
            if case .completed = state {
                blackHole(state)
                break
            }
        }
        if origin.callCount != 0 { benchmark.error("publish() on a valid cache fetched from the origin") }
    }
}

// MARK: 3. update(newData:) to every subscriber

/// From `update(newData:)` until each of 1 or 100 subscribers saw the new value, vs yielding into as
/// many `AsyncStream`s until each consumer saw it; and `update(_:)` to 1 subscriber vs `update(newData:)`.
func updateBenchmarks() {
    for count in [1, 100] {
        let config = configuration(maxDuration: .seconds(1), mallocTolerance: count == 1 ? 4 : 20)

        let streams = StreamFanOut(consumers: count)
        Benchmark(
            "Update.baseline.asyncStreamFanOut.\(count)", configuration: config,
            closure: { benchmark in await streams.measureRound(benchmark) },
            setup: { await streams.setUp() }, teardown: { await streams.tearDown() })

        let store = StoreFanOut(subscribers: count)
        Benchmark(
            "Update.notifies.\(count)", configuration: config,
            closure: { benchmark in await store.measureRound(benchmark) },
            setup: { await store.setUp() }, teardown: { await store.tearDown() })
    }

    // update(_:) reads the cache under the key's write turn and writes what the transform makes of it:
    // paired with update(newData:), the primitive it adds one cache read to.
    let config = configuration(maxDuration: .seconds(1), mallocTolerance: 4)
    let transforming = StoreFanOut(subscribers: 1, usesTransform: true)
    Benchmark(
        "Update.transform.1", configuration: config,
        closure: { benchmark in await transforming.measureRound(benchmark) },
        setup: { await transforming.setUp() }, teardown: { await transforming.tearDown() })
}

// MARK: 4. 10,000 concurrent origin reads on one key

/// 10,000 tasks calling `requireData(from: .origin)` on one key whose origin waits at a gate until all
/// have joined: exactly one fetch, and every reader served, checked every iteration. The baseline spawns
/// 10,000 tasks that wait at one continuation-based gate, opened once all wait.
///
/// Two ways to spawn them, each with its own baseline: child tasks of a task group (what a user writes)
/// and unstructured tasks awaited one by one. The runtime removes a finished child from its group by
/// walking the group's list of children, so a group whose children finish in another order than they
/// were added costs O(n²): the baseline's gate resumes in arrival order, and the second pair shows the
/// store's cost without that effect.
func concurrentOriginBenchmarks() {
    let readers = 10_000
    let config = configuration(
        maxDuration: .seconds(2), maxIterations: 200, warmupIterations: 3, mallocRelativeTolerance: 2)

    /// Runs `readers` concurrent reads of a fresh key through `spawn` and checks one fetch served all.
    func measureReads(
        _ benchmark: Benchmark, key: Int, manager: FlowableDataStateManager<Int>, cache: ActorUserCache,
        spawn: (Int, @escaping @Sendable () async -> Void, () async -> Void) async -> Void
    ) async {
        let origin = GatedOrigin()
        let store = GatedOriginCallback(key: key, manager: manager, cache: cache, origin: origin).create()
        let started = Arrivals()
        started.begin(round: 0, expecting: readers)
        let served = Locked(0)
        benchmark.startMeasurement()
        await spawn(
            readers,
            {
                started.arrive()
                if let user = try? await store.requireData(from: .origin), user.version == 1 {
                    served.withLock { $0 += 1 }
                }
            },
            {
                // Every reader arrived, and goes on into requireData and its join without suspending; a
                // call through the state manager then queues behind their joins, so the fetch is let go
                // only once all of them wait for it (the check after the measurement catches a miss).
                await started.waitForAll()
                _ = await store.dataState()
                origin.gate.open()
            })
        benchmark.stopMeasurement()
        let fetches = origin.callCount
        let servedCount = served.withLock { $0 }
        if fetches != 1 || servedCount != readers {
            benchmark.error("\(readers) concurrent origin reads made \(fetches) fetches and served \(servedCount)")
        }
    }

    /// Spawns `count` child tasks running `body` in a task group, runs `release`, then waits for them.
    func inTaskGroup(_ count: Int, _ body: @escaping @Sendable () async -> Void, _ release: () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count { group.addTask { await body() } }
            await release()
            await group.waitForAll()
        }
    }

    /// Spawns `count` unstructured tasks running `body`, runs `release`, then awaits each in turn.
    func inUnstructuredTasks(
        _ count: Int, _ body: @escaping @Sendable () async -> Void, _ release: () async -> Void
    ) async {
        var tasks: [Task<Void, Never>] = []
        tasks.reserveCapacity(count)
        for _ in 0..<count { tasks.append(Task { await body() }) }
        await release()
        for task in tasks { await task.value }
    }

    for (label, spawn) in [
        ("taskGroup", inTaskGroup), ("unstructured", inUnstructuredTasks),
    ] as [(String, (Int, @escaping @Sendable () async -> Void, () async -> Void) async -> Void)] {
        Benchmark("Concurrent.baseline.gate10000.\(label)", configuration: config) { benchmark in
            let gate = Gate(expected: readers)
            benchmark.startMeasurement()
            await spawn(
                readers, { await gate.wait() },
                {
                    await gate.waitUntilAllWait()
                    gate.open()
                })
            benchmark.stopMeasurement()
        }

        let manager = FlowableDataStateManager<Int>()
        let cache = ActorUserCache()
        Benchmark("Concurrent.originReads10000.\(label)", configuration: config) { benchmark in
            await measureReads(benchmark, key: 7, manager: manager, cache: cache, spawn: spawn)
        }
    }
}

// MARK: 5. Memory per tracked key

/// 1,000 keys, each with one `publish()` subscriber that saw its first state; the baseline is 1,000
/// tasks each iterating an `AsyncStream` that got one value. Measured while held (bytes allocated minus
/// freed is what they hold) and over a whole hold-and-release cycle (what stays: the target is 0).
func memoryBenchmarks() {
    let keys = 1_000
    let config = configuration(
        metrics: memoryMetrics, maxDuration: .seconds(2), maxIterations: 200, warmupIterations: 3,
        mallocRelativeTolerance: 2)
    let users = (0..<keys).map { User(id: $0) }

    /// Starts one consumer per key and waits until each saw its first value.
    @Sendable func holdStreams(_ arrivals: Arrivals) async -> ([AsyncStream<User>.Continuation], [Task<Void, Never>]) {
        var continuations: [AsyncStream<User>.Continuation] = []
        var tasks: [Task<Void, Never>] = []
        continuations.reserveCapacity(keys)
        tasks.reserveCapacity(keys)
        for user in users {
            let (stream, continuation) = AsyncStream.makeStream(of: User.self, bufferingPolicy: .bufferingNewest(1))
            continuations.append(continuation)
            tasks.append(Task { for await _ in stream { arrivals.arrive() } })
            continuation.yield(user)
        }
        await arrivals.waitForAll()
        return (continuations, tasks)
    }

    Benchmark("Memory.baseline.asyncStreamSubscribers1000", configuration: config) { benchmark in
        let arrivals = Arrivals()
        arrivals.begin(round: 0, expecting: keys)
        benchmark.startMeasurement()
        let (continuations, tasks) = await holdStreams(arrivals)
        benchmark.stopMeasurement()
        for continuation in continuations { continuation.finish() }
        for task in tasks { await task.value }
    }

    let manager = FlowableDataStateManager<Int>()
    let cache = ActorUserCache(preloaded: users)
    let origin = CountingOrigin()

    /// Subscribes to every key and waits until each subscriber saw its first state.
    @Sendable func holdKeys(_ arrivals: Arrivals) async -> [Task<Void, Never>] {
        var tasks: [Task<Void, Never>] = []
        tasks.reserveCapacity(keys)
        for key in 0..<keys {
            let store = ActorCacheCallback(key: key, manager: manager, cache: cache, origin: origin).create()
            tasks.append(
                Task {
                    for await state in store.publish() {
                        if case .completed = state { arrivals.arrive() }
                    }
                })
        }
        await arrivals.waitForAll()
        return tasks
    }

    @Sendable func release(_ tasks: [Task<Void, Never>]) async {
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        await waitUntilIdle(manager)
    }

    Benchmark("Memory.keysWithSubscriber1000", configuration: config) { benchmark in
        let arrivals = Arrivals()
        arrivals.begin(round: 0, expecting: keys)
        benchmark.startMeasurement()
        let tasks = await holdKeys(arrivals)
        benchmark.stopMeasurement()
        let tracked = await manager.trackedKeyCount
        await release(tasks)
        if tracked != keys { benchmark.error("expected \(keys) tracked keys, found \(tracked)") }
        if origin.callCount != 0 { benchmark.error("subscribing on a valid cache fetched from the origin") }
    }

    Benchmark("Memory.keysHeldAndReleased1000", configuration: config) { benchmark in
        let arrivals = Arrivals()
        arrivals.begin(round: 0, expecting: keys)
        benchmark.startMeasurement()
        let tasks = await holdKeys(arrivals)
        await release(tasks)
        benchmark.stopMeasurement()
    }
}

// MARK: 6. Next page of a 1,000-item list

/// `requestNextData()` on a cached list of 1,000 articles (a page of 20 is fetched, appended and
/// saved), vs the same done by hand: read the record, fetch the page, append, save to the same cache.
func pagingBenchmarks() {
    let config = configuration(mallocTolerance: 4)
    let origin = FeedOrigin(pageSize: 20)
    let list = PagedData(data: (0..<1_000).map { Article(id: -$0 - 1, title: "Article") }, nextCursor: 1)

    let directCache = FeedCache()
    Benchmark("Paging.baseline.mergeAndSave1000", configuration: config) { benchmark in
        await directCache.save(list, for: "feed")
        benchmark.startMeasurement()
        guard let record = await directCache.record(for: "feed"), let cursor = record.nextCursor else {
            return benchmark.error("nothing cached")
        }
        let page = try await origin.fetchPage(cursor)
        var merged = record.data
        merged.append(contentsOf: page.data)
        await directCache.save(PagedData(data: merged, nextCursor: page.cursor), for: "feed")
        benchmark.stopMeasurement()
    }

    let storeCache = FeedCache()
    let store = FeedCallback(key: "feed", manager: FlowableDataStateManager(), cache: storeCache, origin: origin)
        .create()
    Benchmark("Paging.nextPage1000", configuration: config) { benchmark in
        await storeCache.save(list, for: "feed")
        benchmark.startMeasurement()
        await store.requestNextData()
        benchmark.stopMeasurement()
        let count = await storeCache.record(for: "feed")?.data.count
        if count != 1_020 { benchmark.error("expected 1020 articles after the page, found \(count ?? 0)") }
    }
}
