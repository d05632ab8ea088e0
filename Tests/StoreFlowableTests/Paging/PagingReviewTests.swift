import StoreFlowableTesting
import Testing

@testable import StoreFlowable

// Review of the paging code and its interaction with the core: tests that try to break it. The tests
// under "A new stream's first read while a page holds the write turn" are regression tests for two bugs
// the review found (a stale or failed first read was ignored when only a page write happened since);
// the others pin down tricky interleavings.

typealias ReviewRecord = PagedData<[Int], Int>

/// What the review tests need to see of a key's machine, copied out of the actor.
struct ReviewProbe<Data: Sendable>: Sendable {
    var hasFlight: Bool
    var isDraining: Bool
    var content: Data?
    var version: UInt64
    var lastID: UInt64
    var hasWriteOwner: Bool
    var queued: [String]
    var nextFlight: FlightPhase?
    var prevFlight: FlightPhase?
    var nextDraining: Bool
    var currentState: LoadingState<Data>?
    var subscribers: Int
    var pendingSubscribers: Int
}

extension FlowableDataStateManager {
    /// Review only: a copy of what the machine of `key` holds, or `nil` when the key is not tracked.
    func reviewProbe<Data: Sendable>(for key: Key, _: Data.Type) -> ReviewProbe<Data>? {
        guard let slot = existingSlot(for: key, Data.self) else { return nil }
        let machine = slot.machine
        return ReviewProbe(
            hasFlight: machine.flight != nil,
            isDraining: machine.draining != nil,
            content: machine.content.map { unerased($0, as: Data.self) },
            version: machine.version,
            lastID: machine.lastID,
            hasWriteOwner: machine.writeOwner != nil,
            queued: machine.writeQueue.map { entry in
                switch entry.turn {
                case .flight: "flight"
                case .update: "update"
                case .page(.next, _): "next"
                case .page(.prev, _): "prev"
                case .invalidation: "invalidation"
                case .reload: "reload"
                }
            },
            nextFlight: machine.nextPage.flight?.phase,
            prevFlight: machine.prevPage.flight?.phase,
            nextDraining: machine.nextPage.draining != nil,
            currentState: machine.currentState?.mapContent { unerased($0, as: Data.self) },
            subscribers: machine.subscribers.count,
            pendingSubscribers: machine.pendingSubscribers.count)
    }
}

/// A `publish()` stream attached to the manager by hand, exactly as `CallbackStore.subscribe` does it,
/// but with an unbounded buffer and a first cache read whose timing the test controls; so a test can
/// see every state the stream is sent, deterministically.
struct ReviewManualStream: Sendable {
    let stream: AsyncStream<LoadingState<ReviewRecord>>
    let continuation: AsyncStream<LoadingState<ReviewRecord>>.Continuation
    let id: UInt64
    let version: UInt64

    typealias Runner = CallbackStore<PagingAdapter<TestPaginationCallback<String, [Int], Int>>>

    static func runner(for fixture: PagingFixture) -> Runner {
        let adapter = PagingAdapter(callback: fixture.callback)
        return CallbackStore(callback: adapter, pages: adapter.twoWayPages)
    }

    /// Registers the stream (the first half of `CallbackStore.subscribe`).
    static func attach(_ fixture: PagingFixture, runner: Runner) async throws -> ReviewManualStream {
        let (stream, continuation) = AsyncStream.makeStream(of: LoadingState<ReviewRecord>.self)
        let (registered, effects) = await fixture.manager.subscribe(
            "list", ReviewRecord.self, DirectSubscription(continuation))
        effects.run(for: runner)
        let (id, version) = try #require(registered)
        return ReviewManualStream(stream: stream, continuation: continuation, id: id, version: version)
    }

    /// Reports the first read (the second half of `CallbackStore.subscribe`).
    func initialRead(_ fixture: PagingFixture, runner: Runner, cached: ReviewRecord?, isValid: Bool) async {
        await fixture.manager.initialRead(
            "list", subscriber: id, version: version, cached: cached, isValid: isValid, forceRefresh: false
        ).run(for: runner)
    }

    /// Ends the stream and returns every state it was sent.
    func finish(_ fixture: PagingFixture, runner: Runner) async -> [StateSnapshot<ReviewRecord>] {
        continuation.finish()
        var states: [StateSnapshot<ReviewRecord>] = []
        for await state in stream { states.append(StateSnapshot(state)) }
        await fixture.manager.unsubscribe("list", ReviewRecord.self, subscriber: id).run(for: runner)
        return states
    }
}

/// A two-way callback over the fixture's doubles whose first-page fetch and next-page fetch can ignore
/// cancellation: the first call of each kind, when a gate is given, waits at that gate whatever happens
/// to its task (like an origin call that ignores cancellation).
struct ReviewStubbornCallback: TwoWayPaginationStoreFlowableCallback {
    typealias Key = String
    typealias Data = [Int]
    typealias Cursor = Int

    let base: TestPaginationCallback<String, [Int], Int>
    let firstPageGate: OneShot<Void>?
    let nextPageGate: OneShot<Void>?
    private let calls = LockedValue<(first: Int, next: Int)>((0, 0))

    init(
        base: TestPaginationCallback<String, [Int], Int>, firstPageGate: OneShot<Void>? = nil,
        nextPageGate: OneShot<Void>? = nil
    ) {
        self.base = base
        self.firstPageGate = firstPageGate
        self.nextPageGate = nextPageGate
    }

    var key: String { base.key }
    var flowableDataStateManager: FlowableDataStateManager<String> { base.flowableDataStateManager }

    func loadDataFromCache() async throws -> ReviewRecord? { try await base.loadDataFromCache() }
    func saveDataToCache(newData: ReviewRecord?) async throws { try await base.saveDataToCache(newData: newData) }
    func needRefresh(cachedData: [Int]) async -> Bool { await base.needRefresh(cachedData: cachedData) }

    func fetchDataFromOrigin() async throws -> ReviewRecord {
        let call = calls.withLock {
            $0.first += 1; return $0.first
        }
        let value = try await base.fetchDataFromOrigin()
        if call == 1, let firstPageGate { _ = try? await firstPageGate.value(cancellable: false) }
        return value
    }

    func fetchNextDataFromOrigin(nextCursor: Int, data: [Int]) async throws -> FetchedPage<[Int], Int> {
        let call = calls.withLock {
            $0.next += 1; return $0.next
        }
        let page = try await base.fetchNextDataFromOrigin(nextCursor: nextCursor, data: data)
        if call == 1, let nextPageGate { _ = try? await nextPageGate.value(cancellable: false) }
        return page
    }

    func fetchPrevDataFromOrigin(prevCursor: Int, data: [Int]) async throws -> FetchedPage<[Int], Int> {
        try await base.fetchPrevDataFromOrigin(prevCursor: prevCursor, data: data)
    }
}

@Suite("Paging review: first states, write turns, supersede, ids", .timeLimit(.minutes(1)))
struct PagingReviewTests {
    static let base = PagedData(data: [10, 11], nextCursor: 12, prevCursor: 9)
    typealias Machine = MachineTest.Machine

    // MARK: - A new stream's first read while a page holds the write turn (regressions)

    /// A stream whose first cache read finds the data stale while a page is writing refreshes.
    ///
    /// A page write only merges a page into the data this very read found stale; only a first-page save
    /// or an update makes it fresh. (Before the fix, the stream started from `.completed(stale + page)`
    /// and nothing was fetched, breaking promise 2 of ConcurrencyGuarantees.md.)
    @Test func aStaleFirstReadWhileAPageWritesRefreshes() async throws {
        let stale = LockedValue(false)
        let callback = TestPaginationCallback<String, [Int], Int>(
            key: "list", manager: FlowableDataStateManager(), cache: InMemoryCache(Self.base),
            needRefresh: { _ in stale.withLock { $0 } })
        let fixture = PagingFixture(callback: callback)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        fixture.cache.holdWrites()
        let store = fixture.store
        let page = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)  // the page holds the write turn
        stale.withLock { $0 = true }  // the data expires while the page is being written
        let recorder = StateRecorder(store.publish())
        await eventually { await fixture.manager.registryCounts(for: "list", ReviewRecord.self).subscribers == 1 }
        fixture.cache.releaseWrites()
        _ = await page.valueOrCancel
        try await recorder.waitUntil { !$0.isEmpty }
        let first = try #require(recorder.states.first)
        #expect(first.isLoadingState, "first state of a stream that read stale data: \(first.snapshot)")
        let refreshing = await fixture.manager.dataState(for: "list", of: ReviewRecord.self).isLoading
        #expect(fixture.origin.callCount == 1 || refreshing, "no refresh was started for the stale read")
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    /// The same through the "read is not current" path: the stream read stale data and a page was merged
    /// into it before `initialRead` arrived. The read's verdict still stands (a page merge does not make
    /// stale data fresh), so the stream refreshes and starts from `.loading`.
    @Test func aStaleFirstReadOvertakenByAPageMergeRefreshes() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        let runner = ReviewManualStream.runner(for: fixture)
        fixture.nextOrigin.hold()
        let page = Task { await runner.requestPage(.next, continueWhenError: true) }
        await fixture.nextOrigin.waitForCalls(1)
        // A stream attaches and reads the cache: by now the data has expired (the read says "stale").
        let stream = try await ReviewManualStream.attach(fixture, runner: runner)
        let read = try await fixture.cache.load()
        // The page is merged before the stream reports its read.
        fixture.nextOrigin.release()
        _ = await page.valueOrCancel
        await stream.initialRead(fixture, runner: runner, cached: read, isValid: false)
        let probe = try #require(await fixture.manager.reviewProbe(for: "list", ReviewRecord.self))
        let hadFlight = probe.hasFlight || fixture.origin.callCount > 0
        let states = await stream.finish(fixture, runner: runner)
        #expect(hadFlight, "no refresh was started for the stale read")
        #expect(states.first.map { if case .loading = $0 { true } else { false } } == true, "states: \(states)")
        await fixture.waitUntilReleased()
    }

    /// A stream whose first cache read fails (a throwing read counts as a miss) while a page holds the
    /// write turn, followed by that page's write failing, still gets a state: the miss starts a fetch.
    /// (Before the fix, nothing was fetched and the failed page announced nothing, so the stream was
    /// left without any state.)
    @Test func aFailedFirstReadWhileAPageWriteFailsStillGetsAState() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.origin.enqueue(value: Self.base)
        fixture.cache.holdWrites()
        let store = fixture.store
        let page = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)  // the page read the cache and is writing
        fixture.cache.failReads(with: TestError("unreadable"))
        let recorder = StateRecorder(store.publish())
        await eventually { await fixture.manager.registryCounts(for: "list", ReviewRecord.self).subscribers == 1 }
        fixture.cache.failReads(with: nil)
        fixture.cache.failWrites(with: TestError("full"))
        fixture.cache.releaseWrites()
        _ = await page.valueOrCancel
        fixture.cache.failWrites(with: nil)
        let probe = try #require(await fixture.manager.reviewProbe(for: "list", ReviewRecord.self))
        // With no flight and no current state, the announce of the failed page emitted nothing, and
        // nothing is left that will ever send the stream a state.
        #expect(
            probe.hasFlight || probe.currentState != nil,
            "subscribed stream with no state and nothing running: \(String(describing: probe.currentState))")
        if probe.hasFlight || probe.currentState != nil {
            try await recorder.waitUntil { !$0.isEmpty }
        } else {
            #expect(recorder.states.isEmpty)
        }
        recorder.cancel()
        // The failed page write is remembered as the next direction's error, which keeps the key.
        await eventually { await fixture.manager.reviewProbe(for: "list", ReviewRecord.self)?.pendingSubscribers == 0 }
        await eventually { await fixture.manager.registryCounts(for: "list", ReviewRecord.self).subscribers == 0 }
        await fixture.manager.resetError(for: "list", of: ReviewRecord.self)
        await fixture.waitUntilReleased()
    }

    /// The two cases above in the pure machine, without any concurrency.
    @Test func machineFirstReadDuringAPageWrite() throws {
        func pageWriting() throws -> (Machine, UInt64) {
            var machine = Machine()
            let (s0, v0) = machine.subscribe(100)
            _ = machine.initialRead(subscriber: s0, version: v0, cached: "a", isValid: true, forceRefresh: false)
            let (_, started) = machine.requestPage(.next, waiter: 1, continueWhenError: true)
            let page = try #require(started.startPages.first?.id)
            #expect(machine.pageReturned(.next, page, writer: 5).decision == .write)
            return (machine, page)
        }
        // Stale read during the page write: it refreshes.
        do {
            var (machine, page) = try pageWriting()
            let (s1, v1) = machine.subscribe(101)
            let read = machine.initialRead(
                subscriber: s1, version: v1, cached: "a", isValid: false, forceRefresh: false)
            let saved = machine.pageSaved(.next, page, data: "ab")
            #expect(read.startFlight != nil || saved.startFlight != nil || machine.flight != nil)
        }
        // Failed (nil) read during the page write, then the page write fails: the miss fetches.
        do {
            var (machine, page) = try pageWriting()
            let (s1, v1) = machine.subscribe(101)
            let read = machine.initialRead(
                subscriber: s1, version: v1, cached: nil, isValid: false, forceRefresh: false)
            #expect(read.startFlight != nil)
            let failed = machine.pageSaveFailed(.next, page, error: MachineTest.Failure.save)
            #expect(failed.emission != nil || failed.startFlight != nil || machine.flight != nil)
            #expect(machine.content != nil || machine.flight != nil)
        }
    }

    // MARK: - A new stream's first state (passing)

    @Test func aStreamAttachingWhileAPageLoadsStartsFromTheCachedDataWithThePageLoading() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: nil))
        fixture.nextOrigin.hold()
        let store = fixture.store
        let page = Task { await store.requestNextData() }
        await fixture.nextOrigin.waitForCalls(1)
        let recorder = StateRecorder(store.publish())
        try await recorder.waitUntil { !$0.isEmpty }
        #expect(
            recorder.states.first?.snapshot
                == .completedPaging([10, 11], next: .loading, prev: .fixed(canRequestAdditionalData: true)))
        fixture.nextOrigin.release()
        _ = await page.valueOrCancel
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging([10, 11, 12], next: .noMoreData, prev: .fixed(canRequestAdditionalData: true))
        }
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func aStreamAttachingWhileAPageWritesStartsFromTheMergedData() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.cache.holdWrites()
        let store = fixture.store
        let page = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)
        let recorder = StateRecorder(store.publish())
        await eventually { await fixture.manager.registryCounts(for: "list", ReviewRecord.self).subscribers == 1 }
        // Nothing yet: the write in progress decides the first state.
        #expect(recorder.states.isEmpty)
        fixture.cache.releaseWrites()
        _ = await page.valueOrCancel
        try await recorder.waitUntil { !$0.isEmpty }
        #expect(
            recorder.states.map(\.snapshot)
                == [
                    .completedPaging(
                        [10, 11, 12], next: .fixed(canRequestAdditionalData: true),
                        prev: .fixed(canRequestAdditionalData: true))
                ])
        let probe = try #require(await fixture.manager.reviewProbe(for: "list", ReviewRecord.self))
        #expect(probe.content == fixture.cache.value)
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    /// The version check: a read taken before a page merge and reported after it is not used; the stream
    /// starts from the merged data, once.
    @Test func aValidReadOvertakenByAPageMergeStartsFromTheMergedData() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        let runner = ReviewManualStream.runner(for: fixture)
        let stream = try await ReviewManualStream.attach(fixture, runner: runner)
        let read = try await fixture.cache.load()
        _ = await runner.requestPage(.next, continueWhenError: true)
        await stream.initialRead(fixture, runner: runner, cached: read, isValid: true)
        let states = await stream.finish(fixture, runner: runner)
        #expect(
            states == [
                .completedPaging(
                    PagedData(data: [10, 11, 12], nextCursor: 13, prevCursor: 9),
                    next: .fixed(canRequestAdditionalData: false),
                    prev: .fixed(canRequestAdditionalData: false))
            ])
        #expect(fixture.origin.callCount == 0)
        await fixture.waitUntilReleased()
    }

    // MARK: - Unsubscribe, clear, reset during pages (passing)

    @Test func theLastStreamLeavingDuringAPageWriteLetsTheWriteFinishAndReleasesTheKey() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.cache.holdWrites()
        let request = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)
        request.cancel()
        _ = await request.valueOrCancel
        recorder.cancel()
        await eventually {
            let counts = await fixture.manager.registryCounts(for: "list", ReviewRecord.self)
            let probe = await fixture.manager.reviewProbe(for: "list", ReviewRecord.self)
            return counts.subscribers == 0 && probe?.pendingSubscribers == 0
        }
        let probe = try #require(await fixture.manager.reviewProbe(for: "list", ReviewRecord.self))
        #expect(probe.nextFlight == .saving)
        #expect(probe.content == nil)
        fixture.cache.releaseWrites()
        await fixture.waitUntilReleased()
        #expect(fixture.cache.value == PagedData(data: [10, 11, 12], nextCursor: 13, prevCursor: 9))
    }

    @Test func aPageQueuedBehindAnotherIsRejectedWhenItsOnlyRequesterLeaves() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [9], cursor: 8))
        fixture.cache.holdWrites()
        let store = fixture.store
        let next = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)
        let prev = Task { await store.requestPrevData() }
        await eventually { await fixture.manager.writeQueueLength(for: "list", ReviewRecord.self) == 1 }
        prev.cancel()
        _ = await prev.valueOrCancel
        await eventually { await fixture.manager.writeQueueLength(for: "list", ReviewRecord.self) == 0 }
        let probe = try #require(await fixture.manager.reviewProbe(for: "list", ReviewRecord.self))
        #expect(probe.prevFlight == nil)
        fixture.cache.releaseWrites()
        _ = await next.valueOrCancel
        #expect(fixture.cache.writes == [PagedData(data: [10, 11, 12], nextCursor: 13, prevCursor: 9)])
        await fixture.waitUntilReleased()
    }

    /// clear() with a subscriber while the next page writes and the previous page waits for its turn:
    /// the waiting page is dropped, the writing page finishes, the clear deletes, and the subscriber's
    /// fetch writes the first page again.
    @Test func clearWithASubscriberWhileAPageAwaitsItsWriteTurn() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [9], cursor: 8))
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.cache.holdWrites()
        let next = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)
        let prev = Task { await store.requestPrevData() }
        await eventually { await fixture.manager.writeQueueLength(for: "list", ReviewRecord.self) == 1 }
        let clear = Task { await store.clear() }
        // The previous page's requester is released when the clear supersedes it.
        _ = await prev.valueOrCancel
        await eventually {
            await fixture.manager.reviewProbe(for: "list", ReviewRecord.self)?.queued == ["update"]
        }
        fixture.cache.releaseWrites()
        _ = await next.valueOrCancel
        await clear.valueOrCancel
        try await recorder.waitForLatest { $0.content == [1, 2] && $0.isCompleted }
        #expect(
            fixture.cache.writes == [
                PagedData(data: [10, 11, 12], nextCursor: 13, prevCursor: 9), nil,
                PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil),
            ])
        #expect(recorder.states.contains { $0.content?.contains(9) == true } == false)
        #expect(fixture.prevOrigin.callCount == 1)
        let probe = try #require(await fixture.manager.reviewProbe(for: "list", ReviewRecord.self))
        #expect(probe.content == fixture.cache.value)
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func resetErrorDuringARetriedPageLetsThePageFinish() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(error: TestError("first"))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: nil))
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        await store.requestNextData()
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging([10, 11], next: .error("first"), prev: .fixed(canRequestAdditionalData: true))
        }
        fixture.nextOrigin.hold()
        let retry = Task { await store.requestNextData() }
        await fixture.nextOrigin.waitForCalls(2)
        await fixture.manager.resetError(for: "list", of: ReviewRecord.self)
        fixture.nextOrigin.release()
        _ = await retry.valueOrCancel
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging([10, 11, 12], next: .noMoreData, prev: .fixed(canRequestAdditionalData: true))
        }
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func resetErrorAfterAFailedRefreshLetsPagesLoadAgain() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.origin.enqueue(error: TestError("down"))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: nil))
        let store = fixture.store
        await store.refresh()
        await store.requestNextData()
        #expect(fixture.nextOrigin.callCount == 0)  // turned away: the key remembers the failed refresh
        await fixture.manager.resetError(for: "list", of: ReviewRecord.self)
        #expect(await fixture.manager.trackedKeyCount == 0)
        await store.requestNextData()
        #expect(fixture.cache.value == PagedData(data: [10, 11, 12], nextCursor: nil, prevCursor: 9))
        await fixture.waitUntilReleased()
    }

    // MARK: - Write queue (passing)

    /// The next page writes; the previous page waits for its turn; a refresh starts (dropping the waiting
    /// page) and its result queues; an update begins (dropping the refresh's result). Only the next page
    /// and the update are written, in that order, and every caller returns.
    @Test func writeQueueWithAFlightTwoPagesAndAnUpdate() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [9], cursor: 8))
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.cache.holdWrites()
        let next = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)
        let prev = Task { await store.requestPrevData() }
        await eventually { await fixture.manager.reviewProbe(for: "list", ReviewRecord.self)?.queued == ["prev"] }
        let refresh = Task { await store.refresh() }
        _ = await prev.valueOrCancel  // superseded by the refresh
        await eventually { await fixture.manager.reviewProbe(for: "list", ReviewRecord.self)?.queued == ["flight"] }
        // A page request now is turned away (the first page is loading).
        await store.requestNextData()
        await store.requestPrevData()
        let update = Task { await store.update(newData: [7], nextCursor: 8, prevCursor: nil) }
        await eventually { await fixture.manager.reviewProbe(for: "list", ReviewRecord.self)?.queued == ["update"] }
        // Turned away too (an update is queued).
        await store.requestPrevData()
        fixture.cache.releaseWrites()
        _ = await next.valueOrCancel
        await update.valueOrCancel
        await refresh.valueOrCancel
        #expect(
            fixture.cache.writes == [
                PagedData(data: [10, 11, 12], nextCursor: 13, prevCursor: 9),
                PagedData(data: [7], nextCursor: 8, prevCursor: nil),
            ])
        #expect(fixture.nextOrigin.callCount == 1)
        #expect(fixture.prevOrigin.callCount == 1)
        #expect(fixture.origin.callCount == 1)
        try await recorder.waitForLatest {
            $0.snapshot == .completedPaging([7], next: .fixed(canRequestAdditionalData: true), prev: .noMoreData)
        }
        #expect(
            recorder.states.contains { $0.content?.contains(9) == true || $0.content?.contains(1) == true } == false)
        let probe = try #require(await fixture.manager.reviewProbe(for: "list", ReviewRecord.self))
        #expect(probe.content == fixture.cache.value)
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    @Test func aPageRequestIsTurnedAwayWhileAnUpdateIsQueuedBehindAPageWrite() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.cache.holdWrites()
        let store = fixture.store
        let next = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)
        let update = Task { await store.update(newData: [5]) }
        await eventually { await fixture.manager.reviewProbe(for: "list", ReviewRecord.self)?.queued == ["update"] }
        await store.requestPrevData()
        #expect(fixture.prevOrigin.callCount == 0)
        fixture.cache.releaseWrites()
        _ = await next.valueOrCancel
        await update.valueOrCancel
        // update(newData:) read the cache at its turn: it keeps the cursors the next page wrote.
        #expect(fixture.cache.value == PagedData(data: [5], nextCursor: 13, prevCursor: 9))
        await fixture.waitUntilReleased()
    }

    // MARK: - Draining, pending, supersede (passing)

    /// A first-page fetch abandoned by its only caller keeps draining (its origin ignores cancellation);
    /// a page may load meanwhile, and the drained result is never written.
    @Test func aPageLoadsWhileTheAbandonedFirstPageFetchDrains() async throws {
        let gate = OneShot<Void>()
        let fixture = PagingFixture(cached: Self.base)
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        let callback = ReviewStubbornCallback(base: fixture.callback, firstPageGate: gate)
        let store = callback.create()
        let refresh = Task { await store.refresh() }
        await fixture.origin.waitForCalls(1)
        refresh.cancel()
        await refresh.valueOrCancel
        await eventually { await fixture.manager.reviewProbe(for: "list", ReviewRecord.self)?.isDraining == true }
        let loading = await fixture.manager.dataState(for: "list", of: ReviewRecord.self).isLoading
        #expect(loading == false)
        await store.requestNextData()
        #expect(fixture.cache.value == PagedData(data: [10, 11, 12], nextCursor: 13, prevCursor: 9))
        gate.resolve(.success(()))
        await fixture.waitUntilReleased()
        #expect(fixture.cache.writes == [PagedData(data: [10, 11, 12], nextCursor: 13, prevCursor: 9)])
    }

    /// A page flight pending behind a draining one (its origin ignores cancellation) has a waiter; a
    /// refresh or an update supersedes it. Its waiter returns at once, although the drained call is
    /// still running, and the pending flight never calls the origin.
    @Test(arguments: [false, true])
    func aPendingPageSupersededReleasesItsWaiterAtOnce(byUpdate: Bool) async throws {
        let gate = OneShot<Void>()
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [13], cursor: 14))
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        let callback = ReviewStubbornCallback(base: fixture.callback, nextPageGate: gate)
        let store = callback.create()
        let first = Task { await store.requestNextData() }
        await fixture.nextOrigin.waitForCalls(1)
        first.cancel()
        _ = await first.valueOrCancel
        let second = Task { await store.requestNextData() }
        await eventually { await fixture.manager.pageWaiterCount(for: "list", ReviewRecord.self, .next) == 1 }
        let probe = try #require(await fixture.manager.reviewProbe(for: "list", ReviewRecord.self))
        #expect(probe.nextFlight == .pending && probe.nextDraining)
        if byUpdate {
            await store.update(newData: [5])
        } else {
            await store.refresh()
        }
        _ = await second.valueOrCancel  // returns while the drained call is still held at the gate
        #expect(fixture.nextOrigin.callCount == 1)
        gate.resolve(.success(()))
        await fixture.waitUntilReleased()
        #expect(fixture.nextOrigin.callCount == 1)
        let expected =
            byUpdate
            ? PagedData(data: [5], nextCursor: 12, prevCursor: 9)
            : PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil)
        #expect(fixture.cache.value == expected)
        #expect(
            fixture.cache.writes.contains { $0?.data.contains(12) == true || $0?.data.contains(13) == true } == false)
    }

    /// A requester cancelled while a subscriber keeps the page alive; the page returns after the leave.
    @Test func aPageReturningAfterItsRequesterLeftIsStillMergedForTheSubscriber() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [9], cursor: nil))
        fixture.prevOrigin.hold()
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        let request = Task { await store.requestPrevData() }
        await fixture.prevOrigin.waitForCalls(1)
        request.cancel()
        _ = await request.valueOrCancel
        #expect(await fixture.manager.pageWaiterCount(for: "list", ReviewRecord.self, .prev) == 0)
        fixture.prevOrigin.release()
        try await recorder.waitForLatest {
            $0.snapshot
                == .completedPaging([9, 10, 11], next: .fixed(canRequestAdditionalData: true), prev: .noMoreData)
        }
        #expect(fixture.prevOrigin.cancelledCount == 0)
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    // MARK: - Ids across released key states (passing)

    /// A key state released after a page flight drained, then recreated: a late (duplicate) event of the
    /// old flight or waiter cannot touch the new state, whose ids are all above the old ones.
    @Test func lateEventsOfAReleasedKeysPageFlightNeverMatchTheNewState() async throws {
        let manager = FlowableDataStateManager<String>()
        let (oldWaiter, oldEffects, _) = await manager.requestPage(
            "k", String.self, .next, waiter: OneShot<PageOutcome>(), continueWhenError: true)
        let oldWaiterID = try #require(oldWaiter)
        let oldFlight = try #require(oldEffects.action.startPages.first?.id)
        // The only requester leaves: the flight drains; its call then returns: the key is released.
        let left = await manager.leavePage("k", String.self, .next, waiter: oldWaiterID)
        #expect(left.action.cancelPages.map(\.id) == [oldFlight])
        #expect(await manager.trackedKeyCount == 1)
        _ = await manager.pageFailed("k", String.self, .next, flight: oldFlight, error: CancellationError())
        #expect(await manager.trackedKeyCount == 0)

        let newWaiter = OneShot<PageOutcome>()
        let (newWaiterID, newEffects, _) = await manager.requestPage(
            "k", String.self, .next, waiter: newWaiter, continueWhenError: true)
        let newFlight = try #require(newEffects.action.startPages.first?.id)
        #expect(try #require(newWaiterID) > oldFlight && newFlight > oldFlight)
        // Late duplicates of the old events.
        let returned = await manager.pageReturned("k", String.self, .next, flight: oldFlight, writer: OneShot<Bool>())
        #expect(returned.decision == .discard && returned.effects.action.isEmpty)
        #expect(await manager.pageFailed("k", String.self, .next, flight: oldFlight, error: nil).action.isEmpty)
        #expect(await manager.leavePage("k", String.self, .next, waiter: oldWaiterID).action.isEmpty)
        #expect(await manager.pageWaiterCount(for: "k", String.self, .next) == 1)
        let probe = try #require(await manager.reviewProbe(for: "k", String.self))
        #expect(probe.nextFlight == .fetching)
        // The new flight ends normally.
        let ended = await manager.pageFailed("k", String.self, .next, flight: newFlight, error: nil)
        #expect(ended.action.releasePageWaiters.count == 1)
        #expect(await manager.trackedKeyCount == 0)
    }

    // MARK: - The machine's content follows the cache (passing)

    @Test func theMachinesContentMatchesTheCacheAfterEveryWriteWithASubscriber() async throws {
        let fixture = PagingFixture(cached: Self.base)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.prevOrigin.enqueue(value: FetchedPage(data: [9], cursor: nil))
        fixture.nextOrigin.enqueue(error: TestError("down"))
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        fixture.origin.enqueue(value: PagedData(data: [4], nextCursor: nil, prevCursor: nil))
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        func check(_ step: String) async {
            let probe = await fixture.manager.reviewProbe(for: "list", ReviewRecord.self)
            #expect(probe?.content == fixture.cache.value, "after \(step)")
        }
        await store.requestNextData()
        await check("next page")
        await store.requestPrevData()
        await check("prev page")
        await store.requestNextData()
        await check("failed next page")
        await store.update(newData: [8, 9])
        await check("update")
        await store.refresh()
        await check("refresh")
        await store.clear()
        try await recorder.waitForLatest { $0.content == [4] && $0.isCompleted }
        await check("clear and refetch")
        #expect(fixture.cache.value == PagedData(data: [4], nextCursor: nil, prevCursor: nil))
        recorder.cancel()
        await fixture.waitUntilReleased()
    }
}

@Suite("Paging review: state order under races", .timeLimit(.minutes(1)))
struct PagingReviewOrderTests {
    /// Page requests in both directions (some cancelled), refreshes and updates race on one key, with a
    /// stream attached whose buffer keeps every state. Every state the stream is sent carries a record
    /// the cache held, and the records appear in the order the cache was written: the stream never goes
    /// back to older data. At the end the machine's content is what the cache holds.
    @Test(arguments: 0..<4)
    func statesFollowTheCacheWriteOrder(seed: Int) async throws {
        let manager = FlowableDataStateManager<String>()
        let initial = PagedData(data: [500], nextCursor: 1, prevCursor: 1)
        let callback = TestPaginationCallback<String, [Int], Int>(
            key: "list", manager: manager, cache: InMemoryCache(initial),
            origin: ScriptedOrigin(otherwise: { .success(PagedData(data: [1_000 * $0], nextCursor: 1, prevCursor: 1)) }
            ),
            nextOrigin: ScriptedOrigin(otherwise: { call in
                call % 7 == 3
                    ? .failure(TestError("next \(call)")) : .success(FetchedPage(data: [2_000 + call], cursor: call))
            }),
            prevOrigin: ScriptedOrigin(otherwise: { .success(FetchedPage(data: [3_000 + $0], cursor: $0)) }))
        let fixture = PagingFixture(callback: callback)
        let runner = ReviewManualStream.runner(for: fixture)
        let stream = try await ReviewManualStream.attach(fixture, runner: runner)
        await stream.initialRead(fixture, runner: runner, cached: try await fixture.cache.load(), isValid: true)
        let store = fixture.store
        for round in 0..<15 {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<24 {
                    let kind = (index &* 5 &+ round &* 7 &+ seed) % 24
                    group.addTask {
                        switch kind {
                        case 0 where round % 2 == 0: await store.refresh()
                        case 1 where round % 3 == 0:
                            // Far from every refresh's value ([1_000 × call]), so no record is written twice.
                            await store.update(newData: [100_000 + round * 100 + index])
                        case 2, 14:
                            let task = Task {
                                kind == 2 ? await store.requestNextData() : await store.requestPrevData()
                            }
                            task.cancel()
                            _ = await task.valueOrCancel
                        case 3..<13: await store.requestNextData()
                        default: await store.requestPrevData()
                        }
                    }
                }
            }
        }
        // Every caller returned; a page whose requester was cancelled may still load for the stream.
        await eventually {
            guard let probe = await manager.reviewProbe(for: "list", ReviewRecord.self) else { return false }
            return !probe.hasFlight && !probe.isDraining && !probe.hasWriteOwner && probe.nextFlight == nil
                && probe.prevFlight == nil && !probe.nextDraining
        }
        let probe = try #require(await manager.reviewProbe(for: "list", ReviewRecord.self))
        #expect(probe.content == fixture.cache.value)
        #expect(probe.hasWriteOwner == false && probe.queued.isEmpty && probe.hasFlight == false)
        let states = await stream.finish(fixture, runner: runner)
        let writes = [initial] + fixture.cache.writes.map { $0! }
        let pageWrites = writes.filter { $0.data.contains { $0 > 2_000 && $0 < 4_000 } }.count
        #expect(
            pageWrites > 5 && states.count > 15, "too little happened: \(writes.count) writes, \(states.count) states")
        var lastIndex = 0
        for state in states {
            let content: ReviewRecord? =
                switch state {
                case .loading(let content): content
                case .completed(let content): content
                case .completedPaging(let content, _, _): content
                case .error(let content, _): content
                }
            guard let content else { continue }
            guard let index = writes.lastIndex(of: content) else {
                Issue.record("a state carries a record the cache never held: \(content)")
                continue
            }
            #expect(index >= lastIndex, "the stream went back from write \(lastIndex) to write \(index)")
            lastIndex = max(lastIndex, index)
        }
        #expect(lastIndex == writes.count - 1, "the stream does not end on the last write")
        await manager.resetError(for: "list", of: ReviewRecord.self)
        await fixture.waitUntilReleased()
    }
}

/// A random walk over the pure machine with paging, driven the way `CallbackStore` drives it (the
/// fetch tasks, the write turns and the callers are modelled), checking invariants after every event.
struct ReviewPagingSim {
    typealias M = KeyStateMachine<String, Int, Int, Int, Int>

    struct Rng: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    enum TaskState: Equatable { case calling, waitingTurn(Int), writing }
    enum WriterOwner: Equatable { case main(UInt64), page(PageDirection, UInt64), update(UInt64) }
    struct PageKey: Hashable { let direction: PageDirection; let id: UInt64 }

    var machine = M()
    var rng: Rng
    var cache: String? = "base"
    var log: [String] = []
    var issues: [String] = []
    var nextInt = 1

    var pending: [UInt64: (subscriber: Int, version: UInt64, readAtSubscribe: String?)] = [:]
    var active: [UInt64: Int] = [:]
    var gotState: Set<Int> = []
    var mainWaiters: [UInt64: Int] = [:]
    var pageWaiters: [PageKey: Int] = [:]  // keyed by (direction, waiter id)
    var waiting: Set<Int> = []
    var cancelled: Set<Int> = []
    var mainTasks: [UInt64: TaskState] = [:]
    var pageTasks: [PageKey: TaskState] = [:]
    var updates: [UInt64: TaskState] = [:]  // .waitingTurn(writer) or .writing
    var writers: [Int: WriterOwner] = [:]
    var issuedIDs: Set<UInt64> = []

    /// Whether a first read may fail (a throwing `loadDataFromCache` counts as a miss: `cached` is nil).
    var readFailures = false

    init(seed: UInt64, readFailures: Bool = false) {
        rng = Rng(state: seed)
        self.readFailures = readFailures
    }

    mutating func fresh() -> Int {
        nextInt += 1
        return nextInt
    }

    mutating func issue(_ text: String) {
        issues.append("\(text)\n  after: \(log.suffix(12).joined(separator: "\n         "))")
    }

    mutating func noteID(_ id: UInt64?) {
        guard let id else { return }
        if issuedIDs.contains(id) { issue("id \(id) handed out twice") }
        issuedIDs.insert(id)
    }

    // MARK: Effects

    mutating func run(_ action: M.Action) {
        if let (state, recipients) = action.emission {
            switch recipients {
            case .one(let s): gotState.insert(s)
            case .all(let all):
                for s in all.values { gotState.insert(s) }
                if Set(all.keys) != Set(active.keys) {
                    issue("broadcast to \(all.keys.sorted()) but active are \(active.keys.sorted())")
                }
            }
            if case .completed(let content, _, _) = state, content != cache, machine.writeOwner == nil {
                issue("completed(\(content)) emitted while the cache holds \(cache ?? "nil")")
            }
        }
        if let (resolved, _) = action.resolution {
            for (id, w) in resolved {
                release(w, "main waiter")
                mainWaiters[id] = nil
            }
        }
        for w in action.releasePageWaiters {
            release(w, "page waiter")
            for (key, value) in pageWaiters where value == w { pageWaiters[key] = nil }
        }
        if let r = action.rejectWriter { reject(r, main: true) }
        for r in action.rejectPageWriters { reject(r, main: false) }
        if let g = action.grantWriter { grant(g) }
        if let id = action.startFlight {
            if mainTasks[id] != nil { issue("main flight \(id) started twice") }
            mainTasks[id] = .calling
        }
        for (d, id) in action.startPages {
            if pageTasks[PageKey(direction: d, id: id)] != nil { issue("page flight \(id) started twice") }
            pageTasks[PageKey(direction: d, id: id)] = .calling
        }
    }

    mutating func release(_ w: Int, _ what: String) {
        if waiting.remove(w) == nil, !cancelled.contains(w) { issue("\(what) \(w) released twice or never waited") }
    }

    mutating func reject(_ writer: Int, main: Bool) {
        guard let owner = writers.removeValue(forKey: writer) else { return issue("unknown writer \(writer) rejected") }
        switch owner {
        case .main(let id) where main: mainTasks[id] = nil
        case .page(let d, let id) where !main: pageTasks[PageKey(direction: d, id: id)] = nil
        default: issue("writer \(writer) of \(owner) rejected as main=\(main)")
        }
    }

    mutating func grant(_ writer: Int) {
        guard let owner = writers.removeValue(forKey: writer) else { return issue("unknown writer \(writer) granted") }
        switch owner {
        case .main(let id): mainTasks[id] = .writing
        case .page(let d, let id): pageTasks[PageKey(direction: d, id: id)] = .writing
        case .update(let id): updates[id] = .writing
        }
    }

    // MARK: Events

    enum Choice {
        case requestPage(PageDirection), subscribe, join, beginUpdate, leavePage, leave, clearError
        case initialRead, unsubscribe
        case mainReturns(UInt64), mainSaves(UInt64), pageReturns(PageKey), pageSaves(PageKey), finishUpdate(UInt64)
    }

    mutating func step(allowNew: Bool) -> Bool {
        var choices: [Choice] = []
        if allowNew {
            choices += [.requestPage(.next), .requestPage(.prev), .requestPage(.next), .requestPage(.prev)]
            choices += [.requestPage(.next), .requestPage(.prev), .subscribe, .clearError]
            // Replacements less often, so that pages get as far as the cache.
            if rng.next() % 3 == 0 { choices += [.join, .beginUpdate] }
            if !pageWaiters.isEmpty { choices.append(.leavePage) }
            if !mainWaiters.isEmpty { choices.append(.leave) }
        }
        if !pending.isEmpty { choices.append(.initialRead) }
        if !active.isEmpty || !pending.isEmpty, !allowNew || rng.next() % 3 == 0 { choices.append(.unsubscribe) }
        for (id, state) in mainTasks.sorted(by: { $0.key < $1.key }) {
            switch state {
            case .calling: choices += Array(repeating: .mainReturns(id), count: 3)
            case .writing: choices += Array(repeating: .mainSaves(id), count: 3)
            case .waitingTurn: break
            }
        }
        for (key, state) in pageTasks.sorted(by: { $0.key.id < $1.key.id }) {
            switch state {
            case .calling: choices += Array(repeating: .pageReturns(key), count: 3)
            case .writing: choices += Array(repeating: .pageSaves(key), count: 3)
            case .waitingTurn: break
            }
        }
        for (id, state) in updates.sorted(by: { $0.key < $1.key }) where state == .writing {
            choices += [.finishUpdate(id), .finishUpdate(id)]
        }
        guard !choices.isEmpty else { return false }
        switch choices[Int(rng.next() % UInt64(choices.count))] {
        case .requestPage(let d): requestPage(d)
        case .subscribe: subscribe()
        case .join: join()
        case .beginUpdate: beginUpdate()
        case .leavePage: leavePage()
        case .leave: leave()
        case .clearError:
            log.append("clearError")
            machine.clearError()
        case .initialRead: initialRead()
        case .unsubscribe: unsubscribe()
        case .mainReturns(let id): mainReturns(id)
        case .mainSaves(let id): mainSaves(id)
        case .pageReturns(let key): pageReturns(key)
        case .pageSaves(let key): pageSaves(key)
        case .finishUpdate(let id): finishUpdate(id)
        }
        check()
        return true
    }

    mutating func requestPage(_ d: PageDirection) {
        let w = fresh()
        let cwe = rng.next() % 3 != 0
        let (id, action) = machine.requestPage(d, waiter: w, continueWhenError: cwe)
        log.append(
            "requestPage(\(d), w\(w)) -> \(id.map(String.init) ?? "refused") start \(action.startPages.map(\.id))")
        noteID(id)
        for (_, fid) in action.startPages { noteID(fid) }
        if let id {
            pageWaiters[PageKey(direction: d, id: id)] = w
            waiting.insert(w)
        }
        run(action)
    }

    mutating func leavePage() {
        let (key, w) = pageWaiters.sorted(by: { $0.key.id < $1.key.id })[Int(rng.next() % UInt64(pageWaiters.count))]
        pageWaiters[key] = nil
        waiting.remove(w)
        cancelled.insert(w)
        log.append("leavePage(\(key.direction), \(key.id))")
        run(machine.leavePage(key.direction, waiter: key.id))
    }

    mutating func subscribe() {
        let s = fresh()
        let (id, version) = machine.subscribe(s)
        noteID(id)
        log.append("subscribe s\(s) id \(id) v\(version)")
        pending[id] = (s, version, cache)
    }

    mutating func initialRead() {
        let (id, entry) = pending.sorted(by: { $0.key < $1.key })[Int(rng.next() % UInt64(pending.count))]
        pending[id] = nil
        active[id] = entry.subscriber
        let late = rng.next() % 2 == 0
        let failed = readFailures && rng.next() % 4 == 0
        let cached = failed ? nil : late ? entry.readAtSubscribe : cache
        let version = late ? entry.version : machine.version
        let isValid = !failed && rng.next() % 5 != 0
        log.append(
            "initialRead s\(entry.subscriber)\(failed ? " (read failed)" : "") cached \(cached ?? "nil") v\(version) valid \(isValid)"
        )
        let action = machine.initialRead(
            subscriber: id, version: version, cached: cached, isValid: isValid, forceRefresh: rng.next() % 7 == 0)
        noteID(action.startFlight)
        run(action)
    }

    mutating func unsubscribe() {
        let all = (Array(active.keys) + Array(pending.keys)).sorted()
        let id = all[Int(rng.next() % UInt64(all.count))]
        active[id] = nil
        pending[id] = nil
        log.append("unsubscribe \(id)")
        run(machine.unsubscribe(id))
    }

    mutating func join() {
        let w = fresh()
        let (id, action) = machine.join(w)
        noteID(id)
        noteID(action.startFlight)
        log.append("join w\(w) id \(id) start \(String(describing: action.startFlight))")
        mainWaiters[id] = w
        waiting.insert(w)
        run(action)
    }

    mutating func leave() {
        let (id, w) = mainWaiters.sorted(by: { $0.key < $1.key })[Int(rng.next() % UInt64(mainWaiters.count))]
        mainWaiters[id] = nil
        waiting.remove(w)
        cancelled.insert(w)
        log.append("leave \(id)")
        run(machine.leave(id))
    }

    mutating func beginUpdate() {
        let writer = fresh()
        let (id, now, action) = machine.beginUpdate(writer)
        noteID(id)
        log.append("beginUpdate \(id) now \(now)")
        if now { updates[id] = .writing } else { updates[id] = .waitingTurn(writer); writers[writer] = .update(id) }
        run(action)
    }

    mutating func finishUpdate(_ id: UInt64) {
        updates[id] = nil
        let roll = rng.next() % 6
        if roll == 0 {
            log.append("finishUpdate \(id) error")
            run(machine.finishUpdate(id, newData: nil, error: MachineTest.Failure.write))
        } else {
            let data: String? = roll == 1 ? nil : "U\(id)"
            cache = data
            log.append("finishUpdate \(id) \(data ?? "nil")")
            run(machine.finishUpdate(id, newData: data, error: nil))
        }
    }

    mutating func mainReturns(_ id: UInt64) {
        if rng.next() % 5 == 0 {
            mainTasks[id] = nil
            log.append("flightFailed \(id)")
            run(machine.flightFailed(id, error: MachineTest.Failure.fetch))
            return
        }
        let writer = fresh()
        let (decision, action) = machine.flightReturned(id, writer: writer)
        log.append("flightReturned \(id) \(decision)")
        switch decision {
        case .discard: mainTasks[id] = nil
        case .write: mainTasks[id] = .writing
        case .waitForTurn: mainTasks[id] = .waitingTurn(writer); writers[writer] = .main(id)
        }
        run(action)
    }

    mutating func mainSaves(_ id: UInt64) {
        mainTasks[id] = nil
        if rng.next() % 6 == 0 {
            log.append("flightSaveFailed \(id)")
            run(machine.flightSaveFailed(id, error: MachineTest.Failure.save))
        } else {
            cache = "F\(id)"
            log.append("flightSaved \(id)")
            run(machine.flightSaved(id, data: "F\(id)"))
        }
    }

    mutating func pageReturns(_ key: PageKey) {
        let roll = rng.next() % 6
        if cache == nil || roll == 0 {
            pageTasks[key] = nil
            let error: (any Error)? = cache == nil ? nil : MachineTest.Failure.fetch
            log.append("pageFailed \(key.direction) \(key.id)")
            run(machine.pageFailed(key.direction, key.id, error: error))
            return
        }
        let writer = fresh()
        let (decision, action) = machine.pageReturned(key.direction, key.id, writer: writer)
        log.append("pageReturned \(key.direction) \(key.id) \(decision)")
        switch decision {
        case .discard: pageTasks[key] = nil
        case .write: pageTasks[key] = .writing
        case .waitForTurn: pageTasks[key] = .waitingTurn(writer); writers[writer] = .page(key.direction, key.id)
        }
        run(action)
    }

    mutating func pageSaves(_ key: PageKey) {
        pageTasks[key] = nil
        guard let current = cache, rng.next() % 6 != 0 else {
            log.append("pageSaveFailed \(key.direction) \(key.id)")
            run(machine.pageSaveFailed(key.direction, key.id, error: MachineTest.Failure.save))
            return
        }
        let merged = key.direction == .next ? current + "+n\(key.id)" : "p\(key.id)+" + current
        cache = merged
        log.append("pageSaved \(key.direction) \(key.id)")
        run(machine.pageSaved(key.direction, key.id, data: merged))
    }

    // MARK: Invariants

    mutating func check() {
        for d in PageDirection.allCases {
            let load = machine.page(d)
            let waitersHere = pageWaiters.keys.filter { $0.direction == d }.count
            if waitersHere != load.waiters.count {
                issue("\(d): model has \(waitersHere) page waiters, machine \(load.waiters.count)")
            }
            if !load.waiters.isEmpty, load.flight == nil { issue("\(d): page waiters without a page flight") }
            if let flight = load.flight {
                if flight.phase != .saving {
                    if machine.flight != nil { issue("\(d): page flight \(flight.phase) alongside a main flight") }
                    if machine.hasUpdateInProgress { issue("\(d): page flight \(flight.phase) alongside an update") }
                }
                if flight.phase == .fetching, load.draining != nil { issue("\(d): fetching while draining") }
                if (flight.phase == .saving) != machine.isWriteOwner(.page(d, flight.id)) {
                    issue("\(d): saving phase and write turn disagree")
                }
                if flight.phase == .awaitingWrite,
                    !machine.writeQueue.contains(where: {
                        if case .page(d, flight.id) = $0.turn { true } else { false }
                    })
                {
                    issue("\(d): awaitingWrite but not queued")
                }
            }
            // One origin call per direction: tasks calling the origin.
            let calling = pageTasks.filter { $0.key.direction == d && $0.value == .calling }.count
            if calling > 1 { issue("\(d): \(calling) page origin calls at once") }
        }
        let callingMain = mainTasks.filter { $0.value == .calling }.count
        if callingMain > 1 { issue("\(callingMain) main origin calls at once") }
        if !machine.waiters.isEmpty, machine.flight == nil, machine.writeOwner == nil {
            issue("main waiters with nothing running")
        }
        if !readFailures, machine.writeOwner == nil, machine.hasAudience, machine.content != cache, pending.isEmpty {
            issue("content \(machine.content ?? "nil") but the cache holds \(cache ?? "nil")")
        }
        // Every active subscriber has a state, or something running will give it one.
        if machine.flight == nil, machine.writeOwner == nil {
            for s in active.values where !gotState.contains(s) {
                issue("subscriber s\(s) has no state and nothing runs")
            }
        }
    }
}

@Suite(
    "Paging review: random walks over the machine", .timeLimit(.minutes(1)),
    .disabled(if: isRunningUnderThreadSanitizer, "single-threaded value code: nothing for ThreadSanitizer"))
struct PagingReviewSimTests {
    @Test(arguments: 0..<200)
    func invariantsHoldAndEveryCallerIsReleased(seed: Int) {
        Self.walk(seed: seed, readFailures: false)
    }

    /// With first reads that fail (a throwing cache read, which the store counts as a miss), no
    /// subscriber is ever left without a state while nothing runs (regression: see
    /// `aFailedFirstReadWhileAPageWriteFailsStillGetsAState`).
    @Test(arguments: 0..<200)
    func withFailingFirstReadsEverySubscriberGetsAState(seed: Int) {
        Self.walk(seed: seed, readFailures: true)
    }

    static func walk(seed: Int, readFailures: Bool) {
        var sim = ReviewPagingSim(seed: UInt64(seed) &* 7919 &+ 17, readFailures: readFailures)
        for _ in 0..<150 { _ = sim.step(allowNew: true) }
        // Drain: no new callers; let everything running end and every stream leave.
        var guardSteps = 0
        while sim.step(allowNew: false) {
            guardSteps += 1
            if guardSteps > 10_000 { sim.issue("does not quiesce"); break }
        }
        if !sim.waiting.isEmpty { sim.issue("callers never released: \(sim.waiting.sorted())") }
        if !(sim.machine.isIdle || sim.machine.isIdleExceptForError) { sim.issue("machine not idle at the end") }
        for issue in sim.issues.prefix(3) { Issue.record(Comment(rawValue: "seed \(seed): \(issue)")) }
    }
}
