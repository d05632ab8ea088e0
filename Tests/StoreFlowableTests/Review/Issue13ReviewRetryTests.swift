import StoreFlowableTesting
import Testing

@testable import StoreFlowable

@Suite("Issue13Review: retry delays")
struct Issue13ReviewDelayTests {
    /// "A random number outside `0...1` is clamped into it", never trapped on: a source returning NaN
    /// (a division of zero by zero in a custom generator) counts as 0, for both jitters.
    @Test(arguments: [RetryPolicy.Jitter.full, .equal])
    func aNaNRandomNumberIsClampedNotTrappedOn(jitter: RetryPolicy.Jitter) {
        let policy = RetryPolicy(
            maxAttempts: 3, baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: jitter, random: { .nan })
        let delay = policy.delay(afterFailedAttempt: 1, advice: .retry)
        #expect(delay == (jitter == .full ? .zero : .milliseconds(50)))
    }
}

/// A keyed store whose origin is a closure, with a retry policy on a manual clock, an optional
/// concurrency limit and an event recorder.
private struct ClosureFixture: Sendable {
    let clock = ManualClock()
    let events = StoreEventRecorder()
    let calls = LockedValue(0)
    let manager: FlowableDataStateManager<Int>
    let store: KeyedStore<MemoryCache<Int, String>>

    init(
        policy: RetryPolicy = RetryPolicy(
            maxAttempts: 3, baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: .none),
        limit: ConcurrencyLimit? = nil,
        origin: @escaping @Sendable (_ key: Int, _ call: Int) async throws -> String
    ) {
        manager = FlowableDataStateManager(
            fetchPolicy: FetchPolicy(retry: policy, concurrencyLimit: limit, clock: clock), observer: events)
        let calls = calls
        store = KeyedStore(cache: MemoryCache(), manager: manager) { key in
            let call = calls.withLock { count -> Int in
                count += 1
                return count
            }
            return try await origin(key, call)
        }
    }

    var callCount: Int { calls.withLock { $0 } }

    func summary(of key: Int) -> [String] {
        events.events.filter { $0.key as? Int == key }.map { RetryFixture.summary(of: $0.kind) }
    }

    /// Waits until nothing runs for `key` and nobody uses it, or until the test is cancelled (its time
    /// limit), so that a key that never goes idle fails the test with its round instead of hanging it.
    func waitUntilIdle(_ key: Int) async {
        while await !manager.isIdle(key, String.self), !Task.isCancelled { await Task.yield() }
    }
}

private func waitUntil(_ condition: @Sendable () -> Bool) async {
    while !condition() { await Task.yield() }
}

@Suite("Issue13Review: retries through the store", .timeLimit(.minutes(3)))
struct Issue13ReviewRetryTests {
    private static let noJitter = RetryPolicy(
        maxAttempts: 3, baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: .none)

    // MARK: Superseded during a backoff

    /// `invalidate()` during a backoff drops the sleeping fetch (it never calls the origin again) and
    /// starts a new one, from attempt 1, for the caller that waits.
    @Test func anInvalidationDuringTheBackoffStartsOver() async throws {
        let fixture = RetryFixture([.failure(AdvisedError.transient), .success("new")], policy: Self.noJitter)
        let store = fixture.store
        let caller = Task { try await store.requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        try await store.invalidate()
        #expect(try await caller.value == "new")
        await fixture.waitUntilIdle()
        #expect(fixture.clock.sleeperCount == 0)
        fixture.clock.advance(by: .seconds(60))
        await fixture.waitUntilIdle()
        #expect(fixture.origin.callCount == 2)
        #expect(fixture.origin.maxConcurrentCalls == 1)
        #expect(fixture.cache.value == "new")
        #expect(fixture.summary.filter { $0.hasPrefix("started") } == ["started 1", "started 1"])
    }

    /// An update during a backoff wins: the waiting caller gets its value, the sleeping fetch ends and
    /// never calls the origin again nor writes.
    @Test func anUpdateDuringTheBackoffWins() async throws {
        let fixture = RetryFixture([.failure(AdvisedError.transient)], policy: Self.noJitter) { _ in .success("late") }
        let store = fixture.store
        let caller = Task { try await store.requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        await store.update(newData: "mine")
        #expect(try await caller.value == "mine")
        await fixture.waitUntilIdle()
        #expect(fixture.clock.sleeperCount == 0)
        fixture.clock.advance(by: .seconds(60))
        await fixture.waitUntilIdle()
        #expect(fixture.origin.callCount == 1)
        #expect(fixture.cache.value == "mine")
    }

    /// `refresh()` during a backoff joins the fetch (one flight), and a subscriber that arrives then sees
    /// `.loading` until the last attempt.
    @Test func aRefreshAndASubscriberDuringTheBackoffJoin() async throws {
        let fixture = RetryFixture([.failure(AdvisedError.transient), .success("value")], policy: Self.noJitter)
        let store = fixture.store
        let caller = Task { try await store.requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        let refresh = Task { await store.refresh() }
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { if case .loading = $0 { true } else { false } }
        await fixture.events.waitForEvents(6)
        fixture.clock.advance(by: .milliseconds(100))
        #expect(try await caller.value == "value")
        await refresh.value
        try await recorder.waitForLatest { $0.content == "value" }
        #expect(fixture.origin.callCount == 2)
        #expect(recorder.states.filter { if case .error = $0 { true } else { false } }.isEmpty)
        recorder.cancel()
    }

    /// The last subscriber leaving during a backoff ends the fetch: no sleeper is left and the origin
    /// is not called again.
    @Test func theLastSubscriberLeavingDuringTheBackoffEndsTheFetch() async throws {
        let fixture = RetryFixture([.failure(AdvisedError.transient)], policy: Self.noJitter) { _ in .success("late") }
        let recorder = StateRecorder(fixture.store.publish())
        await fixture.clock.sleepers(atLeast: 1)
        recorder.cancel()
        await recorder.finished()
        await fixture.waitUntilIdle()
        #expect(fixture.clock.sleeperCount == 0)
        fixture.clock.advance(by: .seconds(60))
        await fixture.waitUntilIdle()
        #expect(fixture.origin.callCount == 1)
        #expect(fixture.cache.value == nil)
    }

    // MARK: Events

    /// A caller that arrives while a cancelled fetch's origin call still runs (the fetch drains) starts
    /// a new fetch, which waits for the old call to return: it joined no running fetch, so it reports no
    /// `joinedFetch` (that fetch then reports its own `fetchStarted`).
    @Test func aFetchStartedWhileACancelledOneDrainsIsNotReportedAsAJoin() async throws {
        let gate = Gate()
        let fixture = ClosureFixture { _, call in
            if call == 1 {
                await gate.wait()  // ignores its cancellation
                return "dropped"
            }
            return "value"
        }
        let first = Task { try await fixture.store[1].requireData() }
        await gate.arrived()
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        let second = Task { try await fixture.store[1].requireData() }
        // The second caller waits (for a fetch held back until the cancelled call returns).
        while await fixture.manager.registryCounts(for: 1, String.self).waiters == 0 { await Task.yield() }
        gate.open()
        #expect(try await second.value == "value")
        #expect(fixture.callCount == 2)
        #expect(fixture.summary(of: 1).filter { $0 == "joined" }.isEmpty, "\(fixture.summary(of: 1))")
    }

    /// `cacheMiss(freshness:)` carries `nil` "when nothing usable was cached": an expired value (past
    /// `maxAge`, never served) that a callback's `loadCachedData()` returns reads the same from `.cache`
    /// as from `.both`.
    @Test func anExpiredValueIsAMissWithNoFreshnessFromEverySource() async throws {
        let events = StoreEventRecorder()
        let store = ExpiredValueCallback(flowableDataStateManager: FlowableDataStateManager(observer: events)).create()
        await #expect(throws: StoreFlowableError.self) { try await store.requireData(from: .cache) }
        #expect(try await store.requireData(from: .both) == "fetched")
        let misses = events.events.map { RetryFixture.summary(of: $0.kind) }.filter { $0.hasPrefix("miss") }
        #expect(misses == ["miss", "miss"])
    }

    /// A `cacheHit(.staleWhileRevalidate)` is followed by `staleServed(.revalidating)` (as the kind's
    /// documentation says) also for a `publish()` first read: the stream shows the stale value while a
    /// fetch refreshes it.
    @Test func aSubscriptionsStaleWhileRevalidateReadReportsTheStaleValueServed() async throws {
        let cacheClock = ManualCacheClock()
        let events = StoreEventRecorder()
        let store = KeyedStore(
            cache: MemoryCache<Int, String>(
                policy: FreshnessPolicy(freshFor: .seconds(10), staleWhileRevalidate: .seconds(10)), clock: cacheClock),
            manager: FlowableDataStateManager(fetchPolicy: FetchPolicy(clock: ManualClock()), observer: events)
        ) { key in "fetched \(key)" }
        _ = try await store[1].requireData()
        cacheClock.advance(by: .seconds(15))
        events.removeAll()
        let recorder = StateRecorder(store[1].publish())
        try await recorder.waitForLatest { if case .completed = $0 { true } else { false } }
        await events.waitForEvents(3)  // the read's hit and the fetch's two events
        for _ in 0..<1_000 where events.events.count < 4 { await Task.yield() }
        let reads = events.events.map { RetryFixture.summary(of: $0.kind) }.filter {
            $0.hasPrefix("hit") || $0.hasPrefix("stale")
        }
        #expect(reads == ["hit staleWhileRevalidate", "stale served revalidating"])
        recorder.cancel()
    }

    // MARK: Concurrency limit

    /// The limit's permit is given back during a backoff: another key's fetch runs meanwhile.
    @Test func thePermitIsNotHeldDuringTheBackoff() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        let fixture = ClosureFixture(limit: limit) { key, _ in
            if key == 1 { throw AdvisedError.transient }
            return "value \(key)"
        }
        let failing = Task { try await fixture.store[1].requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        #expect(limit.runningCount == 0)
        #expect(try await fixture.store[2].requireData() == "value 2")
        failing.cancel()
        _ = try? await failing.value
        await fixture.waitUntilIdle(1)
        #expect(limit.runningCount == 0 && limit.queuedCount == 0)
    }

    /// A retry queued for the limit whose caller leaves leaves the queue and never calls the origin:
    /// its events end with the `retryScheduled`, with no `fetchStarted` for the attempt that never ran.
    @Test func aRetryQueuedForTheLimitWhoseCallerLeavesNeverRuns() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        let gate = Gate()
        let fixture = ClosureFixture(limit: limit) { key, _ in
            if key == 1 { throw AdvisedError.transient }
            await gate.wait()
            return "value \(key)"
        }
        let failing = Task { try await fixture.store[1].requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        let holder = Task { try await fixture.store[2].requireData() }
        await gate.arrived()
        fixture.clock.advance(by: .milliseconds(100))
        await waitUntil { limit.queuedCount == 1 }
        failing.cancel()
        await #expect(throws: CancellationError.self) { try await failing.value }
        await fixture.waitUntilIdle(1)
        #expect(limit.queuedCount == 0)
        gate.open()
        #expect(try await holder.value == "value 2")
        #expect(fixture.callCount == 2)
        #expect(fixture.summary(of: 1) == ["miss", "started 1", "failed 1 0ms retrying", "retry 2 in 100ms"])
        #expect(limit.runningCount == 0 && limit.queuedCount == 0)
    }

    // MARK: Page flights

    /// A page fetch is retried like any origin call: the page loads after the backoff.
    @Test func aPageFetchIsRetried() async throws {
        let fixture = RetryPagingFixture(nextPages: [
            .failure(AdvisedError.transient), .success(FetchedPage(data: [2], cursor: nil)),
        ])
        let request = Task { await fixture.store.requestNextData() }
        await fixture.clock.sleepers(atLeast: 1)
        fixture.clock.advance(by: .milliseconds(100))
        let result = await request.value
        #expect({ if case .loaded = result { true } else { false } }(), "\(result)")
        #expect(fixture.callback.nextOrigin.callCount == 2)
        #expect(fixture.callback.cache.value?.data == [1, 2])
    }

    /// A refresh during a page fetch's backoff supersedes it: the page request ends, and the page
    /// origin is not called again.
    @Test func aRefreshDuringAPageBackoffEndsThePageFetch() async throws {
        let fixture = RetryPagingFixture(nextPages: [], otherwise: { _ in .failure(AdvisedError.transient) })
        fixture.callback.origin.enqueue(value: PagedData(data: [9], nextCursor: nil))
        let request = Task { await fixture.store.requestNextData() }
        await fixture.clock.sleepers(atLeast: 1)
        await fixture.store.refresh()
        let result = await request.value
        #expect({ if case .superseded = result { true } else { false } }(), "\(result)")
        while await !fixture.manager.isIdle(1, PagedData<[Int], Int>.self) { await Task.yield() }
        #expect(fixture.clock.sleeperCount == 0)
        fixture.clock.advance(by: .seconds(60))
        while await !fixture.manager.isIdle(1, PagedData<[Int], Int>.self) { await Task.yield() }
        #expect(fixture.callback.nextOrigin.callCount == 1)
        #expect(fixture.callback.cache.value?.data == [9])
    }

    /// A page flight that finds no cursor in its own read of the cache (the caller's read threw, or a
    /// write removed the cursor meanwhile) calls no origin: it reports no fetch, and it does not wait
    /// for a permit of the concurrency limit (held by another origin call here).
    @Test func aPageFlightWithNoCursorReportsNoFetchAndTakesNoPermit() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        let events = StoreEventRecorder()
        let manager = FlowableDataStateManager<Int>(
            fetchPolicy: FetchPolicy(concurrencyLimit: limit, clock: ManualClock()), observer: events)
        let callback = FirstReadFailsPaging(flowableDataStateManager: manager)
        let store = callback.create()
        let gate = Gate()
        let holder = Task { try await limit.run { await gate.wait() } }
        await gate.arrived()
        let finished = LockedValue(false)
        let request = Task {
            let result = await store.requestNextData()
            finished.withLock { $0 = true }
            return result
        }
        await waitUntil { finished.withLock { $0 } || limit.queuedCount > 0 }
        #expect(limit.queuedCount == 0, "the page flight waits for a permit to call no origin")
        gate.open()
        try await holder.value
        let result = await request.value
        #expect({ if case .noMorePages = result { true } else { false } }(), "\(result)")
        #expect(callback.pageCalls.withLock { $0 } == 0)
        #expect(events.events.map { RetryFixture.summary(of: $0.kind) }.filter { $0.hasPrefix("started") }.isEmpty)
    }

    /// Promise 13 ("a callback may call into the library ... and it always gets an answer") does not
    /// hold with a shared limit: an origin that holds the limit's last permit and waits for another
    /// store of the same origin (as the limit's documentation recommends sharing it) waits for ever,
    /// because that store's fetch queues for the permit the waiting origin holds. Known and documented
    /// (see ``ConcurrencyLimit``); this test shows it and ends it by cancelling the caller.
    @Test func anOriginWaitingForAStoreOfTheSameLimitWaitsForItsOwnPermit() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        let policy = FetchPolicy(concurrencyLimit: limit, clock: ManualClock())
        let teams = KeyedStore(
            cache: MemoryCache<Int, String>(), manager: FlowableDataStateManager(fetchPolicy: policy)
        ) { team in "team \(team)" }
        let users = KeyedStore(
            cache: MemoryCache<Int, String>(), manager: FlowableDataStateManager(fetchPolicy: policy)
        ) { user in "user \(user) of " + (try await teams[user % 2].requireData()) }
        let finished = LockedValue(false)
        let caller = Task {
            defer { finished.withLock { $0 = true } }
            return try await users[1].requireData()
        }
        await waitUntil { finished.withLock { $0 } || limit.queuedCount == 1 }
        for _ in 0..<100 { await Task.yield() }
        withKnownIssue("an origin holding the last permit waits for a fetch queued for that permit") {
            #expect(finished.withLock { $0 })
        }
        caller.cancel()
        _ = try? await caller.value
        await waitUntil { limit.runningCount == 0 && limit.queuedCount == 0 }
    }

    // MARK: Stress

    /// 1,000 rounds (200 under ThreadSanitizer: there, beside the other suites, each round's yields
    /// wait behind thousands of tasks, and 1,000 rounds took 58 s locally and more than the suite's
    /// minute on CI): a fetch that always fails with a retryable error, behind a limit of 1, whose
    /// callers (one to three) are cancelled after a random number of steps while the clock moves. Once
    /// the key is idle, nothing of the fetch is left (no sleeper, no permit, no origin call running)
    /// and moving the clock calls the origin no more; the origin never ran twice at once and never
    /// more than `maxAttempts` times per fetch.
    @Test func cancellingCallersAtEveryMomentLeavesNothingBehind() async throws {
        var generator = SplitMix64(seed: 0x13)
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        for round in 0..<(isRunningUnderThreadSanitizer ? 200 : 1_000) where !Task.isCancelled {
            let running = LockedValue((now: 0, max: 0))
            let fixture = ClosureFixture(
                policy: RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(10), maxDelay: .seconds(1), jitter: .none),
                limit: limit
            ) { _, _ in
                running.withLock {
                    $0.now += 1; $0.max = max($0.max, $0.now)
                }
                defer { running.withLock { $0.now -= 1 } }
                await Task.yield()
                throw AdvisedError.transient
            }
            let callers = (0..<(1 + Int(generator.next() % 3))).map { _ in
                Task { try await fixture.store[1].requireData() }
            }
            for caller in callers {
                for _ in 0..<(generator.next() % 8) {
                    if fixture.clock.sleeperCount > 0 { fixture.clock.advance(by: .milliseconds(100)) }
                    await Task.yield()
                }
                caller.cancel()
            }
            for caller in callers { _ = try? await caller.value }
            await fixture.waitUntilIdle(1)
            if Task.isCancelled {
                Issue.record(
                    "round \(round) never went idle: \(fixture.summary(of: 1)), \(fixture.clock.sleeperCount) sleepers, \(limit.runningCount) running, \(limit.queuedCount) queued"
                )
                return
            }
            let calls = fixture.callCount
            #expect(fixture.clock.sleeperCount == 0, "round \(round)")
            #expect(running.withLock { $0.now } == 0, "round \(round)")
            #expect(limit.runningCount == 0 && limit.queuedCount == 0, "round \(round)")
            fixture.clock.advance(by: .seconds(60))
            for _ in 0..<5 { await Task.yield() }
            await fixture.waitUntilIdle(1)
            #expect(fixture.callCount == calls, "round \(round)")
            #expect(running.withLock { $0.max } <= 1, "round \(round)")
            // One fetch per cancellation of every caller at most: each fetch makes at most 4 calls.
            #expect(calls <= 4 * callers.count, "round \(round)")
            let started = fixture.summary(of: 1).filter { $0.hasPrefix("started") }.count
            let ended = fixture.summary(of: 1).filter { $0.hasPrefix("failed") || $0.hasPrefix("succeeded") }.count
            #expect(started == calls && ended == calls, "round \(round): \(fixture.summary(of: 1))")
        }
    }
}

/// A two-way paged store over ``TestPaginationCallback`` whose cache holds `[1]` with a next cursor,
/// with a retry policy on a manual clock.
private struct RetryPagingFixture: Sendable {
    let clock = ManualClock()
    let manager: FlowableDataStateManager<Int>
    let callback: TestPaginationCallback<Int, [Int], Int>
    let store: AnyTwoWayPaginationStoreFlowable<[Int], Int>

    init(
        nextPages: [Result<FetchedPage<[Int], Int>, any Error>],
        otherwise: (@Sendable (Int) -> Result<FetchedPage<[Int], Int>, any Error>)? = nil
    ) {
        manager = FlowableDataStateManager(
            fetchPolicy: FetchPolicy(
                retry: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: .none),
                clock: clock))
        callback = TestPaginationCallback(
            key: 1, manager: manager, cache: InMemoryCache(PagedData(data: [1], nextCursor: 1)),
            nextOrigin: ScriptedOrigin(nextPages, otherwise: otherwise))
        store = callback.create()
    }
}

/// A one-way paged callback whose first cache read throws and whose later reads find `[1]` with no
/// next cursor.
private struct FirstReadFailsPaging: PaginationStoreFlowableCallback {
    struct ReadFailure: Error {}

    let key = 1
    let flowableDataStateManager: FlowableDataStateManager<Int>
    let reads = LockedValue(0)
    let pageCalls = LockedValue(0)

    func loadDataFromCache() async throws -> PagedData<[Int], Int>? {
        let read = reads.withLock { count -> Int in
            count += 1
            return count
        }
        if read == 1 { throw ReadFailure() }
        return PagedData(data: [1], nextCursor: nil)
    }

    func saveDataToCache(newData: PagedData<[Int], Int>?) async throws {}

    func fetchDataFromOrigin() async throws -> PagedData<[Int], Int> {
        PagedData(data: [1], nextCursor: nil)
    }

    func fetchNextDataFromOrigin(nextCursor: Int, data: [Int]) async throws -> FetchedPage<[Int], Int> {
        pageCalls.withLock { $0 += 1 }
        return FetchedPage(data: [2], cursor: nil)
    }

    func needRefresh(cachedData: [Int]) async -> Bool { false }
}

/// A callback whose cache always holds an expired value.
private struct ExpiredValueCallback: StoreFlowableCallback {
    let key = 1
    let flowableDataStateManager: FlowableDataStateManager<Int>

    func loadCachedData() async throws -> CachedData<String>? {
        CachedData(value: "expired", freshness: .expired)
    }

    func loadDataFromCache() async throws -> String? { "expired" }

    func saveDataToCache(newData: String?) async throws {}

    func fetchDataFromOrigin() async throws -> String { "fetched" }

    func needRefresh(cachedData: String) async -> Bool { true }
}
