import StoreFlowable

/// The parts of the tour, in the order they run; each has a flag to run it alone.
enum Part: String, CaseIterable {
    case disk
    case stream
    case cacheHit = "cache-hit"
    case refresh
    case failure
    case freshness
    case concurrency
    case paging
    case edit
    case loaders
    case loadingStates = "loading-states"
    case resilience
    case instances

    /// The command-line flag that selects this part.
    var flag: String { "--\(rawValue)" }

    /// One line for `--help`.
    var summary: String {
        switch self {
        case .disk: "a cache on disk: run twice, the second run reads the first's"
        case .stream: "publish() on an empty cache, then on a fresh one"
        case .cacheHit: "getData() answered by the cache, no origin call"
        case .refresh: "refresh() while subscribed: old value, then new"
        case .failure: "a failed refresh keeps the last good value"
        case .freshness: "stale-while-revalidate, stale-if-error, maxAge on a clock"
        case .concurrency: "10,000 concurrent callers share one origin fetch"
        case .paging: "a list loaded page by page; 100 callers, one page fetch"
        case .edit: "update { } from 100 tasks at once: every append kept"
        case .loaders: "observable Loaders over a JSON API: one request, typed errors"
        case .loadingStates: "a load with a \"taking longer\" interrupt and a timeout, on a clock"
        case .resilience: "100 users in one batched call; retries; a concurrency limit"
        case .instances: "two instances share a cache: B's subscriber sees A's update"
        }
    }

    /// The section heading printed before the part runs.
    var heading: String {
        switch self {
        case .disk: "Disk: a cache that outlives the process"
        case .stream: "Stream: the states of publish()"
        case .cacheHit: "Cache hit: getData() without the origin"
        case .refresh: "Refresh: loading the old value, then the new one"
        case .failure: "Failure: a failed refresh keeps its content"
        case .freshness: "Freshness: what a read serves as a value ages"
        case .concurrency: "Concurrency: 10,000 callers, one fetch"
        case .paging:
            "Paging: \(DemoListOrigin.itemCount) items in pages of \(DemoListOrigin.pageSize)"
        case .edit: "Edit: update { } changes a cached list atomically"
        case .loaders: "Loaders: what a screen holds, over a JSON HTTP API"
        case .loadingStates: "Loading states: interrupts, a timeout, only the current load writes"
        case .resilience: "Resilience: batching, retries with backoff, a concurrency limit"
        case .instances: "Instances: a change made by another instance reaches subscribers"
        }
    }
}

/// Runs `parts` in order and returns what did not behave as the library promises (empty when all did).
func runTour(_ parts: [Part]) async -> [String] {
    var checks = Checks()
    for (index, part) in parts.enumerated() {
        if index > 0 { print() }
        print("== \(part.heading) ==")
        switch part {
        case .disk: await showDisk(&checks)
        case .stream: await showStream(&checks)
        case .cacheHit: await showCacheHit(&checks)
        case .refresh: await showRefresh(&checks)
        case .failure: await showFailure(&checks)
        case .freshness: await showFreshness(&checks)
        case .concurrency: await showConcurrency(&checks)
        case .paging: await showPaging(&checks)
        case .edit: await showEdit(&checks)
        case .loaders: await showLoaders(&checks)
        case .loadingStates: await showLoadingStates(&checks)
        case .resilience: await showResilience(&checks)
        case .instances: await showInstances(&checks)
        }
    }
    return checks.problems
}

/// Collects the promises the tour saw broken, and prints each one where it happened.
struct Checks {
    /// One line per broken promise.
    private(set) var problems: [String] = []

    /// Records and prints `problem` unless `condition` holds.
    mutating func expect(_ condition: Bool, _ problem: String) {
        guard !condition else { return }
        print("  !! unexpected: \(problem)")
        problems.append(problem)
    }
}

/// The shape of a state, to compare what a stream delivered with what the tour expects.
enum Shape: Equatable {
    case loading(User?)
    case completed(User)
    case error(User?)

    init?(_ state: LoadingState<User>?) {
        switch state {
        case nil: return nil
        case .loading(let content): self = .loading(content)
        case .completed(let content, _, _): self = .completed(content)
        case .error(let content, _): self = .error(content)
        }
    }
}

/// A store for user `id` over a new memory cache, fetching from `origin`.
private func makeStore(id: Int, origin: DemoOrigin) -> AnyStoreFlowable<User> {
    DemoRepository.store(id: id, origin: origin)
}

// MARK: Parts

private func showStream(_ checks: inout Checks) async {
    let origin = DemoOrigin()
    let store = makeStore(id: 1, origin: origin)
    let ada1 = User(id: 1, name: "Ada", revision: 1)

    print("for await state in store.publish()   // cache empty")
    var watcher = StateWatcher(store.publish(), since: .now)
    let first = await watcher.next()
    let second = await watcher.next()
    watcher.stop()
    checks.expect(Shape(first) == .loading(nil), "first state should be loading(content: nil)")
    checks.expect(Shape(second) == .completed(ada1), "second state should be completed(\(ada1))")

    print("for await state in store.publish()   // cache now fresh")
    var again = StateWatcher(store.publish(), since: .now)
    let only = await again.next()
    again.stop()
    checks.expect(Shape(only) == .completed(ada1), "a fresh cache should give completed(\(ada1))")

    let calls = await origin.callCount
    print("origin calls: \(calls) (the fresh cache needed no fetch)")
    checks.expect(calls == 1, "origin should be called once, not \(calls) times")
}

private func showCacheHit(_ checks: inout Checks) async {
    let origin = DemoOrigin()
    let store = makeStore(id: 2, origin: origin)
    let clock = ContinuousClock()

    var start = clock.now
    let fetched = await store.getData()
    let fetchTime = start.duration(to: clock.now)
    let callsBefore = await origin.callCount

    start = clock.now
    let cached = await store.getData()
    let hitTime = start.duration(to: clock.now)
    let callsAfter = await origin.callCount

    let times = [milliseconds(fetchTime), milliseconds(hitTime)]
    let width = times.map(\.count).max() ?? 0
    let (fetchColumn, hitColumn) = (times[0].padding(toLeading: width), times[1].padding(toLeading: width))
    print("getData() -> \(describe(fetched))  in \(fetchColumn)  (cache empty: fetched)")
    print("getData() -> \(describe(cached))  in \(hitColumn)  (fresh cache: no fetch)")
    print("origin calls: \(callsBefore) before the second getData(), \(callsAfter) after")
    checks.expect(fetched != nil && cached == fetched, "both calls should return the same user")
    checks.expect(callsBefore == 1 && callsAfter == 1, "the cache hit should not call the origin")
}

private func showRefresh(_ checks: inout Checks) async {
    let origin = DemoOrigin()
    let store = makeStore(id: 3, origin: origin)
    let old = await store.getData()
    let new = User(id: 3, name: "Alan", revision: 2)

    print("cache filled with \(describe(old)); for await state in store.publish()")
    var watcher = StateWatcher(store.publish(), since: .now)
    let initial = await watcher.next()
    print("await store.refresh()")
    await store.refresh()
    let loading = await watcher.next()
    let completed = await watcher.next()
    watcher.stop()
    checks.expect(old != nil && Shape(initial) == .completed(old ?? new), "first state should be the cached user")
    checks.expect(Shape(loading) == .loading(old), "refresh should show loading(content: \(describe(old)))")
    checks.expect(Shape(completed) == .completed(new), "refresh should end with completed(\(new))")

    let calls = await origin.callCount
    print("origin calls: \(calls) (one to fill the cache, one for the refresh)")
    checks.expect(calls == 2, "origin should be called twice, not \(calls) times")
}

private func showFailure(_ checks: inout Checks) async {
    let origin = DemoOrigin()
    let store = makeStore(id: 4, origin: origin)
    let old = await store.getData()
    let new = User(id: 4, name: "Barbara", revision: 2)

    print("cache filled with \(describe(old)); for await state in store.publish()")
    let start = ContinuousClock.now
    var watcher = StateWatcher(store.publish(), since: start)
    _ = await watcher.next()

    print("origin goes down; await store.refresh()")
    await origin.setFailing(true)
    await store.refresh()
    let loading = await watcher.next()
    let failed = await watcher.next()
    checks.expect(Shape(loading) == .loading(old), "refresh should show loading(content: \(describe(old)))")
    checks.expect(Shape(failed) == .error(old), "the error should keep content \(describe(old))")

    let cached = await store.getData()
    print("getData() -> \(describe(cached))   (the cached value is still fresh)")
    print("dataState() -> \(describe(await store.dataState()))")
    checks.expect(old != nil && cached == old, "getData() should still return \(describe(old))")

    print("origin comes back; await store.refresh()")
    await origin.setFailing(false)
    await store.refresh()
    _ = await watcher.next()
    let recovered = await watcher.next()
    watcher.stop()
    print("dataState() -> \(describe(await store.dataState()))")
    checks.expect(Shape(recovered) == .completed(new), "the retry should end with completed(\(new))")
}

private func showConcurrency(_ checks: inout Checks) async {
    let latency = Duration.milliseconds(100)
    let origin = DemoOrigin(latency: latency)
    let store = makeStore(id: 5, origin: origin)
    let callers = 10_000
    let clock = ContinuousClock()

    let start = clock.now
    let results = await withTaskGroup(of: Result<User, any Error>.self) { group in
        for _ in 0..<callers {
            group.addTask {
                do {
                    return .success(try await store.requireData(from: .origin))
                } catch {
                    return .failure(error)
                }
            }
        }
        var results: [Result<User, any Error>] = []
        for await result in group { results.append(result) }
        return results
    }
    let wallTime = start.duration(to: clock.now)

    var values: [User] = []
    var errors: [any Error] = []
    for result in results {
        switch result {
        case .success(let user): values.append(user)
        case .failure(let error): errors.append(error)
        }
    }
    let distinct = Set(values.map(\.description)).sorted().joined(separator: ", ")
    let calls = await origin.callCount

    print("callers:         \(grouped(callers)) tasks in a task group, each:")
    print("                 try await store.requireData(from: .origin)")
    print("origin calls:    \(calls)")
    print("values received: \(grouped(values.count)) (all \(distinct.isEmpty ? "-" : distinct))")
    print("errors:          \(grouped(errors.count))\(errors.first.map { error in " (first: \(error))" } ?? "")")
    print("wall time:       \(milliseconds(wallTime)) (origin latency \(milliseconds(latency)))")
    checks.expect(calls == 1, "\(callers) callers should share one fetch, not \(calls)")
    checks.expect(values.count == callers && errors.isEmpty, "every caller should receive the value")
}
