import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promise 12 (cancelling never blocks), with promises 2 and 7 under load: cancelling a consumer at any
/// moment, while the key's states are being delivered to it, ends its stream and nothing else. Nothing
/// deadlocks, the next stream still gets the latest state, and the key is released once everything has
/// ended. (A subscription that yielded into its stream while holding its lock deadlocked here within a
/// second: the delivering thread waited for the consuming task's lock, held by `swift_task_cancel`
/// while the stream's termination handler waited for the subscription's lock. A deadlock blocks the
/// cooperative threads, so the time limit cannot end it; the process hangs.)
///
/// Every storm runs rounds until a round count or a time budget is reached, whichever comes first, and
/// moves the cancellation point from round to round: 0 to 3 `Task.yield()`s after the consumer's task
/// was created (with 0, often before it started; otherwise before, during or right after its first
/// state), or 0 to 3 yields after it received its first state.
///
/// - `consumersCancelledAroundTheirFirstState`: with nothing else running, the only delivery racing the
///   cancellation is the stream's own first state (a valid cache: one `.completed`, no fetch; a stale
///   one: `.loading`, then a fetch that is cancelled when its only subscriber leaves).
/// - `consumersCancelledWhileUpdatesAreDelivered`: one task updates the key in a loop.
/// - `consumersCancelledWhileRefreshesAreDelivered`: one task refreshes in a loop against an origin
///   that answers at once, so `.loading` and `.completed` are delivered back to back.
/// - `consumersCancelledWhileClearsAreDelivered`: one task clears in a loop, so the consumers see
///   `.loading(nil)` and the fetch that starts for them.
/// - `consumersOfAPagedStoreCancelledWhilePagesAreDelivered`: one task requests next pages (and now and
///   then the first page again) in a loop; the consumers' states go through the paged presentation.
/// - `manyConsumersCancelledAtStaggeredMoments`: 8 consumers per round, each cancelled at a different
///   moment, while one task updates, refreshes and clears.
/// - `requireDataCallersCancelledWhileBeingResumed`: 16 `requireData(from: .origin)` callers per round
///   share a fetch that completes at once; half of them are cancelled at pseudo-random moments, so the
///   cancellation races the fetch resuming them. Cancelled callers get the value or
///   `CancellationError`, the others always the value.
///
/// Each storm ends with checks that fail on a broken store: the task driving the deliveries made
/// progress, a fresh `publish()` still reaches a `.completed` state with what the cache holds, the
/// origin never saw two concurrent calls, and the state manager holds nothing once everything ended.
@Suite(.timeLimit(.minutes(1)))
struct ConsumerCancellationStressTests {
    /// The longest a storm runs.
    static let stormDuration = Duration.milliseconds(1_500)

    @Test(arguments: ["valid", "stale"])
    func consumersCancelledAroundTheirFirstState(cached: String) async throws {
        // A stale value fetches "stale-n", which is stale again: every stream's first read refetches.
        let fixture = StoreFixture(cached: cached, otherwise: { .success("\(cached)-\($0)") })
        let store = fixture.store
        let rounds = await storm(rounds: 50_000) { round in
            await Consumer { store.publish() }.cancel(at: CancelPoint(round: round, consumer: 0))
        }
        #expect(rounds > 0)
        let recorder = StateRecorder(store.publish())
        if cached == "valid" {
            try await recorder.waitForLatest { $0.isCompleted }
            #expect(recorder.snapshots == [.completed("valid")])
            #expect(fixture.origin.callCount == 0)
        } else {
            // A fetch cancelled during the storm may still be returning: wait for the stream to show
            // the cache once it settled.
            try await recorder.waitForLatest { $0.isCompleted && $0.content == fixture.cache.value }
            #expect(fixture.origin.maxConcurrentCalls == 1)
        }
        recorder.cancel()
        await fixture.waitUntilReleased()
        #expect(await fixture.registry() == (0, 0))
    }

    @Test func consumersCancelledWhileUpdatesAreDelivered() async throws {
        let fixture = StoreFixture(cached: "valid")
        let store = fixture.store
        let updater = Driver { await store.update(newData: "update-\($0)") }
        let rounds = await storm(rounds: 20_000) { round in
            await Consumer { store.publish() }.cancel(at: CancelPoint(round: round, consumer: 0))
        }
        #expect(await updater.stop() > 0)
        try await expectFreshStreamAfterStorm(rounds: rounds, fixture: fixture, finalUpdate: "final")
        #expect(fixture.origin.callCount == 0)
    }

    @Test func consumersCancelledWhileRefreshesAreDelivered() async throws {
        let fixture = StoreFixture(cached: "valid")
        let store = fixture.store
        let refresher = Driver { _ in await store.refresh() }
        let rounds = await storm(rounds: 20_000) { round in
            await Consumer { store.publish() }.cancel(at: CancelPoint(round: round, consumer: 0))
        }
        #expect(await refresher.stop() > 0)
        try await expectFreshStreamAfterStorm(rounds: rounds, fixture: fixture)
        #expect(fixture.origin.callCount > 0)
    }

    @Test func consumersCancelledWhileClearsAreDelivered() async throws {
        let fixture = StoreFixture(cached: "valid")
        let store = fixture.store
        let clearer = Driver { _ in await store.clear() }
        let rounds = await storm(rounds: 20_000) { round in
            await Consumer { store.publish() }.cancel(at: CancelPoint(round: round, consumer: 0))
        }
        #expect(await clearer.stop() > 0)
        // The cache may be empty now: the fresh stream then fetches and ends on what it saved.
        try await expectFreshStreamAfterStorm(rounds: rounds, fixture: fixture)
    }

    @Test func consumersOfAPagedStoreCancelledWhilePagesAreDelivered() async throws {
        let callback = TestPaginationCallback<String, [Int], Int>(
            key: "list", manager: FlowableDataStateManager(),
            cache: InMemoryCache(PagedData(data: [0], nextCursor: 1)),
            origin: ScriptedOrigin(otherwise: { _ in .success(PagedData(data: [0], nextCursor: 1)) }),
            nextOrigin: ScriptedOrigin(otherwise: { .success(FetchedPage(data: [$0], cursor: $0 + 1)) }))
        let fixture = PagingFixture(callback: callback)
        let store = fixture.store
        // Every 32nd request reloads the first page, so the list stays short and refreshes race too.
        let pager = Driver { index in
            guard index % 32 != 31 else { return await store.refresh() }
            await store.requestNextData()
        }
        let rounds = await storm(rounds: 20_000) { round in
            await Consumer { store.publish() }.cancel(at: CancelPoint(round: round, consumer: 0))
        }
        #expect(await pager.stop() > 0)
        #expect(rounds > 0)
        #expect(fixture.nextOrigin.callCount > 0)
        #expect(fixture.nextOrigin.maxConcurrentCalls == 1)
        // On a slow run the pager may not reach its first refresh: at most one first-page fetch at once.
        #expect(fixture.origin.maxConcurrentCalls <= 1)
        // A page fetch cancelled during the storm may still be writing: the stream ends on what it wrote.
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { state in
            guard case .completed(let content, let next, _) = state, !next.isLoading else { return false }
            return content == fixture.cache.value?.data
        }
        #expect(fixture.cache.value != nil)
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func manyConsumersCancelledAtStaggeredMoments() async throws {
        let fixture = StoreFixture(cached: "valid")
        let store = fixture.store
        let driver = Driver { index in
            switch index % 4 {
            case 0, 1: await store.update(newData: "update-\(index)")
            case 2: await store.refresh()
            default: await store.clear()
            }
        }
        let rounds = await storm(rounds: 5_000) { round in
            let consumers = (0..<8).map { _ in Consumer { store.publish() } }
            for (index, consumer) in consumers.enumerated() {
                await consumer.cancel(at: CancelPoint(round: round, consumer: index))
            }
        }
        #expect(await driver.stop() > 0)
        try await expectFreshStreamAfterStorm(rounds: rounds, fixture: fixture, finalUpdate: "final")
    }

    @Test func requireDataCallersCancelledWhileBeingResumed() async throws {
        let fixture = StoreFixture()
        let store = fixture.store
        var random = SplitMix64(seed: 0x5EED)
        var values = 0
        var cancellations = 0
        let rounds = await storm(rounds: 5_000) { round in
            let callers = (0..<16).map { _ in Task { try await store.requireData(from: .origin) } }
            // Cancel the odd callers in one round and the even ones in the next, each after 0 to 5 yields.
            let cancelled = Set((0..<16).filter { $0 % 2 == round % 2 })
            for index in cancelled.sorted() {
                for _ in 0..<random.next(below: 6) { await Task.yield() }
                callers[index].cancel()
            }
            for (index, caller) in callers.enumerated() {
                do {
                    let value = try await caller.value
                    #expect(value.hasPrefix("fresh-"))
                    values += 1
                } catch is CancellationError {
                    #expect(cancelled.contains(index), "caller \(index) was not cancelled")
                    cancellations += 1
                } catch {
                    Issue.record("caller \(index) failed with \(error)")
                }
            }
        }
        #expect(rounds > 0)
        // Every caller that was not cancelled got a value.
        #expect(values >= rounds * 8)
        #expect(values + cancellations == rounds * 16)
        #expect(fixture.origin.callCount > 0)
        #expect(fixture.origin.maxConcurrentCalls == 1)
        await fixture.waitUntilReleased()
        #expect(await fixture.registry() == (0, 0))
        // The key still serves a caller that is not cancelled.
        #expect(try await store.requireData(from: .origin).hasPrefix("fresh-"))
    }

    /// Checks the end of a storm on `fixture`'s key: after the optional `finalUpdate`, a new stream
    /// reaches a `.completed` state with what the cache holds (exactly `.completed(finalUpdate)` when
    /// given), the origin never ran twice at once, and the key is released once the stream ends.
    private func expectFreshStreamAfterStorm(
        rounds: Int, fixture: StoreFixture, finalUpdate: String? = nil
    ) async throws {
        #expect(rounds > 0)
        let store = fixture.store
        if let finalUpdate {
            await store.update(newData: finalUpdate)
            #expect(fixture.cache.value == finalUpdate)
        }
        let recorder = StateRecorder(store.publish())
        if let finalUpdate {
            try await recorder.waitForLatest { $0.isCompleted }
            #expect(recorder.snapshots == [.completed(finalUpdate)])
        } else {
            // A fetch cancelled during the storm may still be returning: the stream ends on the cache.
            try await recorder.waitForLatest { $0.isCompleted && $0.content == fixture.cache.value }
        }
        #expect(fixture.origin.maxConcurrentCalls <= 1)
        recorder.cancel()
        await fixture.waitUntilReleased()
        #expect(await fixture.registry() == (0, 0))
    }
}

/// Runs `body` for rounds 0, 1, 2… until `rounds` rounds have run or the storm's time is up.
///
/// - Returns: The number of rounds run.
private func storm(
    rounds: Int, for duration: Duration = ConsumerCancellationStressTests.stormDuration,
    _ body: (_ round: Int) async -> Void
) async -> Int {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: duration)
    var round = 0
    while round < rounds, clock.now < deadline, !Task.isCancelled {
        await body(round)
        round += 1
    }
    return round
}

/// When a consumer is cancelled.
private enum CancelPoint {
    /// After this many yields from the moment its task was created (0: possibly before it started).
    case afterYields(Int)
    /// After this many yields from the moment it received its first state.
    case afterFirstState(yields: Int)

    /// The point for `consumer` in `round`: over any 8 consecutive rounds, every consumer goes
    /// through 0 to 3 yields both from its start and from its first state.
    init(round: Int, consumer: Int) {
        let yields = (round &+ consumer) % 4
        self = ((round / 4) &+ consumer) % 2 == 0 ? .afterYields(yields) : .afterFirstState(yields: yields)
    }
}

/// A task consuming a `publish()` stream until it is cancelled, as an app's observer does.
private struct Consumer {
    let task: Task<Void, Never>
    let sawState: LockedValue<Bool>

    /// Starts a task that calls `publish` and loops over the stream.
    init<Value: Sendable>(_ publish: @escaping @Sendable () -> AsyncStream<LoadingState<Value>>) {
        let sawState = LockedValue(false)
        self.sawState = sawState
        task = Task {
            for await _ in publish() {
                sawState.withLock { $0 = true }
            }
        }
    }

    /// Cancels the task at `point` and waits until its loop has ended.
    func cancel(at point: CancelPoint) async {
        switch point {
        case .afterYields(let yields):
            for _ in 0..<yields { await Task.yield() }
        case .afterFirstState(let yields):
            await eventually { sawState.withLock { $0 } }
            for _ in 0..<yields { await Task.yield() }
        }
        task.cancel()
        await task.value
    }
}

/// A task that runs an operation over and over, numbering each run, until it is stopped.
private struct Driver {
    let task: Task<Int, Never>

    /// Starts running `operation`.
    init(_ operation: @escaping @Sendable (_ index: Int) async -> Void) {
        task = Task {
            var index = 0
            while !Task.isCancelled {
                await operation(index)
                index += 1
            }
            return index
        }
    }

    /// Stops the loop after the run in progress.
    ///
    /// - Returns: The number of runs started.
    func stop() async -> Int {
        task.cancel()
        return await task.value
    }
}
