import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// The independent review of `reloadFromCache()`: the promises of its doc comment and of
/// `Docs/ConcurrencyGuarantees.md` under adversarial schedules, reached with gates (held cache reads and
/// writes, a held origin, hooks inside each cache callback), never by sleeping.
@Suite("Reload review: promises under adversarial schedules", .timeLimit(.minutes(1)))
struct ReloadReviewTests {
    static let page = PagedData(data: [10, 11], nextCursor: 12, prevCursor: 9)

    // MARK: A fetch already writing when the change arrives

    /// The reload's promise: a fetch already writing "writes first; since its value may be older than
    /// the change, the reload then marks it stale ... so the key is never left fresh with it". A callback
    /// that keeps no mark (the default `invalidateCache()`) cannot be marked: the reload must not take
    /// what it reads as fresh, and refetches for the subscribers.
    @Test func aValueWrittenBehindTheChangeIsRefetchedWhenTheCacheKeepsNoMark() async throws {
        let fixture = StoreFixture(cached: "stale")
        let recorder = StateRecorder(fixture.store.publish())
        fixture.cache.holdWrites()
        await fixture.cache.waitForWriteAttempts(1)
        let reload = Task { await fixture.store.reloadFromCache() }
        await eventually { await fixture.manager.writeQueueLength(for: "key", String.self) == 1 }
        fixture.origin.hold()
        fixture.cache.releaseWrites()
        await reload.valueOrCancel
        #expect(await fixture.store.dataState().isLoading, "fresh-1, written after the change, was kept as fresh")
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted(with: "fresh-2") }
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    /// The same promise for a paged store, whose adapter keeps no mark: a page fetched for the data before
    /// the change, merged after it, is refetched as a first page.
    @Test func aPageMergedBehindTheChangeIsRefetchedAsAFirstPage() async throws {
        let fixture = PagingFixture(cached: Self.page)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.cache.holdWrites()
        let page = Task { await store.requestNextData() }
        await fixture.cache.waitForWriteAttempts(1)
        let reload = Task { await store.reloadFromCache() }
        await eventually { await fixture.manager.writeQueueLength(for: "list", PagingFixture.Record.self) == 1 }
        fixture.origin.hold()
        fixture.cache.releaseWrites()
        _ = await page.valueOrCancel
        await reload.valueOrCancel
        #expect(await store.dataState().isLoading, "the merged page, fetched before the change, was kept as fresh")
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted && $0.content == [1, 2] }
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    /// The same promise when the mark throws (`staleMarkFailed`): the subscribers are refetched, and the
    /// refetch's write replaces the value the cache could not mark.
    @Test func aValueWhoseMarkFailedIsRefetched() async throws {
        let fixture = RRFixture()
        let recorder = StateRecorder(fixture.store.publish())
        fixture.cache.holdWrites()
        await fixture.cache.waitForWriteAttempts(1)
        let reload = Task { await fixture.stores.reloadFromCache(forKey: "key") }
        await fixture.waitForQueue(1)
        fixture.hooks.onNextInvalidate { _ in fixture.cache.failWrites(with: TestError("read-only")) }
        fixture.origin.hold()
        fixture.cache.releaseWrites()
        await reload.valueOrCancel
        fixture.cache.failWrites(with: nil)
        #expect(await fixture.store.dataState().isLoading, "fresh-1, which could not be marked, was kept as fresh")
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted(with: "fresh-2") }
        #expect(fixture.cache["key"]?.value == "fresh-2")
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    // MARK: Calling the store from inside the reload's own read

    /// What a cache read calls on the store while the reload that made it holds the key's write turn.
    enum CallInsideRead: String, CaseIterable, Sendable {
        case reload, update, clear, invalidate, transform, requireFromOrigin, refresh, validate, publish
        /// Another key's origin call that updates this key: a cycle of waits through two keys.
        case otherKeyUpdatingThisOne
    }

    /// Promise 13: a callback may call into the library, also into its own key, and always gets an
    /// answer; a call that would wait for the callback's own outcome is refused. The reload's read holds
    /// the key's write turn like an update's read does, so whatever it calls must not wait for that turn.
    @Test(arguments: CallInsideRead.allCases)
    func callingTheStoreFromInsideTheReloadsReadNeverWedgesTheKey(_ call: CallInsideRead) async throws {
        let fixture = RRFixture(cached: "cached") { key, stores in
            if key == "other" { await stores["key"].update(newData: "from-other") }
        }
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted(with: "cached") }
        fixture.writeElsewhere("remote")
        let answered = LockedValue(false)
        let stores = fixture.stores
        fixture.hooks.onNextRead { _ in
            await Self.perform(call, on: stores)
            answered.withLock { $0 = true }
        }
        let reload = Task { await fixture.stores.reloadFromCache(forKey: "key") }
        await eventually { answered.withLock { $0 } }
        // A wedged key never releases the reload either: stop here rather than wait for it.
        guard answered.withLock({ $0 }) else {
            Issue.record("\(call) from inside the reload's read never returned")
            return
        }
        await reload.valueOrCancel
        // The key is usable afterwards.
        await fixture.store.update(newData: "after")
        try await recorder.waitForLatest { $0.isCompleted(with: "after") }
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    static func perform(_ call: CallInsideRead, on stores: KeyedStore<RRHookCache>) async {
        let store = stores["key"]
        switch call {
        case .reload: await store.reloadFromCache()
        case .update: await store.update(newData: "inside")
        case .clear: await store.clear()
        case .invalidate: _ = try? await store.invalidate()
        case .transform: _ = try? await store.update { ($0 ?? "") + "+" }
        case .requireFromOrigin: _ = try? await store.requireData(from: .origin)
        case .refresh: await store.refresh()
        case .validate:
            // The key's value was made stale elsewhere: validating would fetch.
            await store.validate()
        case .publish:
            for await _ in store.publish() { break }
        case .otherKeyUpdatingThisOne: _ = try? await stores["other"].requireData(from: .origin)
        }
    }
}

/// Cancelling the reload's caller, the callers waiting for the key and its streams, at every moment.
@Suite("Reload review: cancellation at every moment", .timeLimit(.minutes(1)))
struct ReloadReviewCancellationTests {
    /// When the reload's caller is cancelled.
    enum Moment: String, CaseIterable, Sendable {
        case beforeTheCall, whileQueued, whileMarking, whileReading, rightAfter
    }

    /// "Cancelling the caller does not stop the reload": whenever the caller is cancelled, the reload
    /// takes its turn, marks the value a fetch wrote behind the change, reads, and the subscriber is
    /// refetched; the turn is released and the key goes idle.
    @Test(arguments: Moment.allCases)
    func cancellingTheReloadsCallerAtAnyMomentStillEndsTheReload(_ moment: Moment) async throws {
        let fixture = RRFixture()
        let recorder = StateRecorder(fixture.store.publish())
        // F1 is writing "fresh-1" (held): the reload queues behind it and must mark.
        fixture.cache.holdWrites()
        await fixture.cache.waitForWriteAttempts(1)
        let start = Signal()
        let gate = Signal()
        let reached = LockedValue(false)
        let hold: RRHookCache.Hook = { _ in
            reached.withLock { $0 = true }
            await gate.wait()
        }
        if moment == .whileMarking { fixture.hooks.onNextInvalidate(hold) }
        if moment == .whileReading { fixture.hooks.onNextRead(hold) }
        let stores = fixture.stores
        let reload = Task {
            if moment == .beforeTheCall { await start.wait() }
            await stores.reloadFromCache(forKey: "key")
        }
        if moment == .beforeTheCall {
            reload.cancel()
            start.open()
        }
        await fixture.waitForQueue(1)
        if moment == .whileQueued { reload.cancel() }
        fixture.cache.releaseWrites()
        if moment == .whileMarking || moment == .whileReading {
            await eventually { reached.withLock { $0 } }
            reload.cancel()
            gate.open()
        }
        await reload.valueOrCancel
        if moment == .rightAfter { reload.cancel() }
        #expect(fixture.cache.invalidatedKeys == ["key"])
        try await recorder.waitForLatest { $0.isCompleted(with: "fresh-2") }
        #expect(fixture.origin.callCount == 2)
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    /// Callers (from the origin and from the cache) and streams around a reload, each cancelled at a
    /// random moment (before the reload, while it waits or reads, as its outcome is delivered, right
    /// after): every caller returns, those not cancelled with a value, no key is left tracked, and the
    /// origin never runs twice at once.
    @Test func callersAndStreamsCancelledAtEveryMomentAroundAReloadAllReturn() async throws {
        var random = SplitMix64(seed: 0x5EED_0A0D)
        for round in 0..<(isRunningUnderThreadSanitizer ? 40 : 200) {
            let fixture = RRFixture(cached: round % 3 == 0 ? "cached" : nil)
            let heldOrigin = round.isMultiple(of: 2)
            if heldOrigin { fixture.origin.hold() }
            let store = fixture.store
            let stores = fixture.stores
            let recorders = (0..<2).map { _ in StateRecorder(store.publish()) }
            let callers = (0..<3).map { index in
                Task { try? await store.requireData(from: index == 0 ? .origin : .both) }
            }
            fixture.writeElsewhere("remote-\(round)")
            let reloads = (0..<2).map { _ in Task { await stores.reloadFromCache(forKey: "key") } }
            // Each target is cancelled after a random number of yields, or never.
            let cancelAt = (0..<7).map { _ in random.next(below: 12) }
            for step in 0..<10 {
                for (target, at) in cancelAt.enumerated() where at == step {
                    switch target {
                    case 0..<3: callers[target].cancel()
                    case 3..<5: reloads[target - 3].cancel()
                    default: recorders[target - 5].cancel()
                    }
                }
                await Task.yield()
            }
            if heldOrigin { fixture.origin.release() }
            for (index, caller) in callers.enumerated() {
                let value = await caller.valueOrCancel
                if cancelAt[index] >= 10 { #expect(value != nil, "round \(round): caller \(index) got nothing") }
            }
            for reload in reloads { await reload.valueOrCancel }
            for recorder in recorders { recorder.cancel() }
            await fixture.waitUntilIdle()
            #expect(await fixture.manager.trackedKeyCount == 0, "round \(round)")
            #expect(fixture.mostConcurrentCallsOfAKey <= 1, "round \(round)")
        }
    }

    /// A reload whose cache read hangs holds the key's write turn until the read returns; the callers
    /// waiting for the key can still be cancelled and return at once, and once the read returns the
    /// reload ends and the key is released.
    @Test func callersOfAKeyWhoseReloadReadHangsCanLeave() async throws {
        let fixture = RRFixture(cached: "cached")
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted(with: "cached") }
        let gate = Signal()
        let reached = LockedValue(false)
        fixture.hooks.onNextRead { _ in
            reached.withLock { $0 = true }
            await gate.wait()
        }
        let stores = fixture.stores
        let reload = Task { await stores.reloadFromCache(forKey: "key") }
        await eventually { reached.withLock { $0 } }
        let store = fixture.store
        let caller = Task { try? await store.requireData(from: .origin) }
        let update = Task { await store.update(newData: "queued") }
        await fixture.waitForQueue(1)
        caller.cancel()
        #expect(await caller.valueOrCancel == nil)
        recorder.cancel()
        gate.open()
        await reload.valueOrCancel
        await update.valueOrCancel
        #expect(fixture.cache["key"]?.value == "queued")
        await fixture.waitUntilIdle()
    }
}

/// `reloadFromCache()` called from inside every callback the store runs, and from the observer.
@Suite("Reload review: reloads from inside callbacks", .timeLimit(.minutes(1)))
struct ReloadReviewReentrancyTests {
    /// Where the reload is called from.
    enum Inside: String, CaseIterable, Sendable {
        case originCall, flightWrite, updateWrite, clearRemoval, invalidationMark, reloadMark, reloadRead
        case streamsFirstRead, callersRead
    }

    /// Whatever callback calls `reloadFromCache()` on its own key gets an answer (at once, or after a
    /// turn it does not hold), every operation ends, the stream ends on what the cache holds, and the key
    /// goes idle.
    @Test(arguments: Inside.allCases)
    func aReloadFromInsideACallbackNeverWedgesTheKey(_ inside: Inside) async throws {
        // Only the origin call of `originCall` writes elsewhere and reloads, once.
        let once = LockedValue(inside == .originCall)
        let fixture = RRFixture(cached: inside == .originCall ? nil : "cached") { key, stores in
            let first = once.withLock { state in
                let wasFirst = state
                state = false
                return wasFirst
            }
            guard first else { return }
            stores.cache.base.insert("remote", forKey: key, storedAt: stores.cache.clock.now)
            await stores.reloadFromCache(forKey: key)
        }
        let stores = fixture.stores
        let reloadHook: RRHookCache.Hook = { key in await stores.reloadFromCache(forKey: key) }
        let store = fixture.store
        if inside == .streamsFirstRead { fixture.hooks.onNextRead(reloadHook) }
        let recorder = StateRecorder(store.publish())
        if inside != .originCall { try await recorder.waitForLatest { $0.isCompleted(with: "cached") } }
        switch inside {
        case .originCall:
            #expect(try await store.requireData() == "remote")
        case .flightWrite:
            fixture.hooks.onNextSet(reloadHook)
            await store.refresh()
        case .updateWrite:
            fixture.hooks.onNextSet(reloadHook)
            await store.update(newData: "updated")
        case .clearRemoval:
            fixture.hooks.onNextRemove(reloadHook)
            await store.clear()
        case .invalidationMark:
            fixture.hooks.onNextInvalidate(reloadHook)
            try await store.invalidate()
        case .reloadMark:
            // A reload behind a fetch's write marks; its mark reloads again.
            fixture.cache.holdWrites()
            let refresh = Task { await store.refresh() }
            await fixture.cache.waitForWriteAttempts(1)
            fixture.hooks.onNextInvalidate(reloadHook)
            let reload = Task { await stores.reloadFromCache(forKey: "key") }
            await fixture.waitForQueue(1)
            fixture.cache.releaseWrites()
            await refresh.valueOrCancel
            await reload.valueOrCancel
        case .reloadRead:
            fixture.hooks.onNextRead(reloadHook)
            await stores.reloadFromCache(forKey: "key")
        case .streamsFirstRead:
            break
        case .callersRead:
            fixture.hooks.onNextRead(reloadHook)
            #expect(await store.getData() == "cached")
        }
        // Once everything settled, the stream shows what the cache holds.
        let cache = fixture.cache
        let latest = try await recorder.waitForLatest { state in
            guard let value = cache["key"]?.value, !(cache["key"]?.isInvalidated ?? false) else { return false }
            return state.isCompleted(with: value)
        }
        #expect(latest.isCompleted)
        recorder.cancel()
        await fixture.waitUntilIdle()
        #expect(fixture.mostConcurrentCallsOfAKey <= 1)
    }

    /// An observer that reloads the key (in a task: it is called synchronously) on each of the first
    /// events it receives, the reloads' own events included: every reload ends and the key goes idle.
    @Test func anObserverReloadingOnItsEventsNeverWedgesTheKey() async throws {
        let events = RREventLog()
        let fixture = RRFixture(observer: events)
        let stores = fixture.stores
        let reloads = LockedValue<[Task<Void, Never>]>([])
        events.onEvent { event in
            guard let key = event.key as? String else { return }
            reloads.withLock { tasks in
                guard tasks.count < 20 else { return }
                tasks.append(Task { await stores.reloadFromCache(forKey: key) })
            }
        }
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        _ = try await fixture.store.requireData(from: .origin)
        try await fixture.store.invalidate()
        await eventually { reloads.withLock { $0.count } >= 20 }
        events.onEvent(nil)
        for task in reloads.withLock({ $0 }) { await task.valueOrCancel }
        let cache = fixture.cache
        try await recorder.waitForLatest { state in
            guard let entry = cache["key"], !entry.isInvalidated else { return false }
            return state.isCompleted(with: entry.value)
        }
        recorder.cancel()
        await fixture.waitUntilIdle()
        #expect(events.count("reloaded from the cache") >= 1)
    }
}

/// Reloads racing every other operation of the key, and each other; paged stores; many keys.
@Suite("Reload review: reloads racing other operations", .timeLimit(.minutes(1)))
struct ReloadReviewRaceTests {
    /// The operation a reload races.
    enum Other: String, CaseIterable, Sendable {
        case update, clear, invalidate, transform, refresh, requireFromOrigin, reload
    }

    /// Which of the two holds the key's write turn (or its origin call) first.
    enum Order: String, CaseIterable, Sendable {
        case otherFirst, reloadFirst
    }

    /// A reload and another operation, each arriving while the other holds the key (its write held, the
    /// reload's read held, or the origin call held): both return, the writes are those of the
    /// operations in the order they took the turn, the origin never runs twice at once, and the stream
    /// ends on what the cache holds.
    @Test(arguments: Other.allCases, Order.allCases)
    func aReloadRacingAnotherOperationEndsConsistent(_ other: Other, _ order: Order) async throws {
        let fixture = RRFixture(cached: "cached")
        let store = fixture.store
        let stores = fixture.stores
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted(with: "cached") }
        fixture.writeElsewhere("remote")
        let gate = Signal()
        let reached = LockedValue(false)
        let run: @Sendable () async -> Void = {
            switch other {
            case .update: await store.update(newData: "updated")
            case .clear: await store.clear()
            case .invalidate: _ = try? await store.invalidate()
            case .transform: _ = try? await store.update { ($0 ?? "nil") + "+" }
            case .refresh: await store.refresh()
            case .requireFromOrigin: _ = try? await store.requireData(from: .origin)
            case .reload: await stores.reloadFromCache(forKey: "key")
            }
        }
        let first: Task<Void, Never>
        let second: Task<Void, Never>
        if order == .reloadFirst {
            fixture.hooks.onNextRead { _ in
                reached.withLock { $0 = true }
                await gate.wait()
            }
            first = Task { await stores.reloadFromCache(forKey: "key") }
            await eventually { reached.withLock { $0 } }
            second = Task { await run() }
        } else {
            switch other {
            case .refresh, .requireFromOrigin: fixture.origin.hold()
            case .reload:
                fixture.hooks.onNextRead { _ in
                    reached.withLock { $0 = true }
                    await gate.wait()
                }
            case .update, .clear, .invalidate, .transform: fixture.cache.holdWrites()
            }
            first = Task { await run() }
            switch other {
            case .refresh, .requireFromOrigin: await fixture.origin.waitForCalls(1)
            case .reload: await eventually { reached.withLock { $0 } }
            case .update, .clear, .invalidate, .transform: await fixture.cache.waitForWriteAttempts(1)
            }
            second = Task { await stores.reloadFromCache(forKey: "key") }
        }
        // Let the second one reach the key, then let the first one go.
        for _ in 0..<20 { await Task.yield() }
        gate.open()
        fixture.cache.releaseWrites()
        fixture.origin.release()
        await first.valueOrCancel
        await second.valueOrCancel
        let cache = fixture.cache
        try await recorder.waitForLatest { state in
            guard let entry = cache["key"], !entry.isInvalidated else { return false }
            return state.isCompleted(with: entry.value)
        }
        #expect(fixture.mostConcurrentCallsOfAKey <= 1)
        // A value fetched before the reload began is never written after it: a refresh or caller that
        // the reload dropped gets the reloaded value, and the cache keeps it.
        if order == .otherFirst, other == .refresh || other == .requireFromOrigin {
            #expect(fixture.cache.writeCount == 0)
            #expect(fixture.cache["key"]?.value == "remote")
        }
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    /// Many reloads at once, some behind a fetch writing: all return, nothing is written but the fetch's
    /// value and the marks, and the subscriber ends on a refetched value.
    @Test func manyConcurrentReloadsBehindAWriteAllReturn() async throws {
        let fixture = RRFixture()
        let recorder = StateRecorder(fixture.store.publish())
        fixture.cache.holdWrites()
        await fixture.cache.waitForWriteAttempts(1)
        let stores = fixture.stores
        let reloads = (0..<50).map { _ in Task { await stores.reloadFromCache(forKey: "key") } }
        await fixture.waitForQueue(50)
        fixture.origin.hold()
        fixture.cache.releaseWrites()
        for reload in reloads { await reload.valueOrCancel }
        // Every reload began while F1 was writing: each marks, none is taken as fresh.
        #expect(fixture.cache.writeCount == 1)
        #expect(fixture.cache.invalidatedKeys.count == 50)
        #expect(fixture.origin.callCount == 2)
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted(with: "fresh-2") }
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    /// A cache read that throws during a reload counts as a miss: the subscribers and callers are
    /// fetched for, and the reload ends.
    @Test func aFailingReadDuringAReloadFetchesForTheSubscribers() async throws {
        let fixture = RRFixture(cached: "cached")
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted(with: "cached") }
        fixture.cache.failReads(with: TestError("unreadable"))
        fixture.origin.hold()
        await fixture.stores.reloadFromCache(forKey: "key")
        fixture.cache.failReads(with: nil)
        #expect(await fixture.store.dataState().isLoading)
        fixture.origin.release()
        try await recorder.waitForLatest { $0.isCompleted(with: "fresh-1") }
        recorder.cancel()
        await fixture.waitUntilIdle()
    }

    // MARK: Paged stores

    /// A page fetched for the data before the change is dropped by a reload and never merged; a page
    /// request made while a reload waits for the turn is turned away; the stream ends on the cache.
    @Test func aReloadDropsAPageNotYetWrittenAndTurnsAwayRequestsWhileItRuns() async throws {
        let fixture = PagingFixture(cached: ReloadReviewTests.page)
        fixture.nextOrigin.enqueue(value: FetchedPage(data: [12], cursor: 13))
        let store = fixture.store
        let recorder = StateRecorder(store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        fixture.nextOrigin.hold()
        let page = Task { await store.requestNextData() }
        await fixture.nextOrigin.waitForCalls(1)
        fixture.cache.value = PagedData(data: [20, 21], nextCursor: 22, prevCursor: nil)
        await store.reloadFromCache()
        fixture.nextOrigin.release()
        let result = await page.valueOrCancel
        #expect("\(result)" == ".superseded")
        #expect(fixture.cache.writes.isEmpty, "the page fetched for the old data was merged")
        try await recorder.waitForLatest { $0.isCompleted && $0.content == [20, 21] }
        // A reload waiting behind a refresh's write: page requests are turned away meanwhile.
        fixture.origin.enqueue(value: PagedData(data: [1, 2], nextCursor: 3, prevCursor: nil))
        fixture.cache.holdWrites()
        let refresh = Task { await store.refresh() }
        await fixture.cache.waitForWriteAttempts(1)
        let reload = Task { await store.reloadFromCache() }
        await eventually { await fixture.manager.writeQueueLength(for: "list", PagingFixture.Record.self) == 1 }
        let turnedAway = await store.requestNextData()
        #expect("\(turnedAway)" == ".turnedAway(.dataBeingReplaced)")
        fixture.origin.enqueue(value: PagedData(data: [5], nextCursor: nil, prevCursor: nil))
        fixture.cache.releaseWrites()
        await refresh.valueOrCancel
        await reload.valueOrCancel
        try await recorder.waitForLatest { $0.isCompleted && $0.content == [5] }
        recorder.cancel()
        await fixture.waitUntilReleased()
    }

    /// Reloads racing page requests in both directions, refreshes and updates of a paged store, with
    /// callers cancelled at random: everything returns, the key is released, and once settled the stream
    /// shows what the cache holds.
    @Test func reloadsRacingPagesRefreshesAndUpdatesOfAPagedStore() async throws {
        var random = SplitMix64(seed: 0xBA6E5)
        for round in 0..<(isRunningUnderThreadSanitizer ? 10 : 40) {
            let fixture = PagingFixture(cached: ReloadReviewTests.page)
            for page in 0..<20 {
                fixture.nextOrigin.enqueue(value: FetchedPage(data: [100 + page], cursor: 200 + page))
                fixture.prevOrigin.enqueue(value: FetchedPage(data: [-100 - page], cursor: -200 - page))
                fixture.origin.enqueue(value: PagedData(data: [round, page], nextCursor: 1, prevCursor: 0))
            }
            let store = fixture.store
            let recorder = StateRecorder(store.publish())
            var tasks: [Task<Void, Never>] = []
            for _ in 0..<12 {
                let task: Task<Void, Never>
                switch random.next(below: 5) {
                case 0: task = Task { _ = await store.requestNextData() }
                case 1: task = Task { _ = await store.requestPrevData() }
                case 2: task = Task { await store.refresh() }
                case 3: task = Task { await store.update(newData: [round]) }
                default: task = Task { await store.reloadFromCache() }
                }
                tasks.append(task)
                if random.next(below: 4) == 0 { tasks[random.next(below: tasks.count)].cancel() }
                for _ in 0..<random.next(below: 3) { await Task.yield() }
            }
            for task in tasks { await task.valueOrCancel }
            let cache = fixture.cache
            try await recorder.waitForLatest { state in
                guard case .completed(let content, _, _) = state else { return false }
                return content == cache.value?.data
            }
            recorder.cancel()
            await fixture.waitUntilReleased()
            #expect(fixture.origin.maxConcurrentCalls <= 1, "round \(round)")
            #expect(fixture.nextOrigin.maxConcurrentCalls <= 1, "round \(round)")
            #expect(fixture.prevOrigin.maxConcurrentCalls <= 1, "round \(round)")
        }
    }

    // MARK: Many keys

    /// `reloadFromCache(where:)` (of the `KeyedStore` and of the manager) while streams of many keys come
    /// and go and the cache changes elsewhere: every call returns, each live stream ends on what the
    /// cache holds, and no key is left tracked.
    @Test func reloadWhereWhileKeysComeAndGo() async throws {
        var random = SplitMix64(seed: 0xC0DE)
        let fixture = RRFixture()
        let keys = (0..<24).map { "k\($0)" }
        for key in keys { fixture.writeElsewhere("v0-\(key)", forKey: key) }
        let stores = fixture.stores
        var live: [String: StateRecorder<String>] = [:]
        var calls: [Task<Void, Never>] = []
        for round in 0..<(isRunningUnderThreadSanitizer ? 20 : 80) {
            let key = keys[random.next(below: keys.count)]
            if let recorder = live.removeValue(forKey: key) {
                recorder.cancel()
            } else {
                live[key] = StateRecorder(stores[key].publish())
            }
            let changed = keys[random.next(below: keys.count)]
            fixture.writeElsewhere("v\(round)-\(changed)", forKey: changed)
            switch random.next(below: 3) {
            case 0: calls.append(Task { await stores.reloadFromCache(where: { _ in true }) })
            case 1:
                calls.append(
                    Task { await stores.manager.reloadFromCache(where: { $0.hasSuffix("1") }) { stores[$0] } })
            default: calls.append(Task { _ = await stores[changed].getData() })
            }
            for _ in 0..<random.next(below: 4) { await Task.yield() }
        }
        for call in calls { await call.valueOrCancel }
        // A last reload of every tracked key: each live stream then shows what the cache holds.
        await stores.reloadFromCache(where: { _ in true })
        let cache = fixture.cache
        for (key, recorder) in live {
            try await recorder.waitForLatest { state in
                guard let entry = cache[key] else { return false }
                return state.isCompleted(with: entry.value)
            }
            recorder.cancel()
        }
        await fixture.waitUntilIdle()
        #expect(fixture.origin.callCount == 0, "every value was cached fresh: nothing needed a fetch")
    }

    // MARK: Everything at once

    /// Streams, callers of every kind, updates, clears, invalidations, refreshes and reloads of a few
    /// keys, values changed elsewhere, and cancellations, all at once: at the end every call returned,
    /// the origin never ran twice at once for a key, and the manager tracks no key.
    @Test func everythingAtOnceLeavesNothingBehind() async throws {
        var random = SplitMix64(seed: 0xA11_0CE)
        for round in 0..<(isRunningUnderThreadSanitizer ? 4 : 20) {
            let fixture = RRFixture()
            let keys = ["a", "b", "c"]
            let stores = fixture.stores
            var tasks: [Task<Void, Never>] = []
            var recorders: [StateRecorder<String>] = []
            for step in 0..<60 {
                let key = keys[random.next(below: keys.count)]
                let store = stores[key]
                switch random.next(below: 11) {
                case 0: recorders.append(StateRecorder(store.publish(forceRefresh: random.next(below: 4) == 0)))
                case 1: tasks.append(Task { _ = try? await store.requireData() })
                case 2: tasks.append(Task { _ = try? await store.requireData(from: .origin) })
                case 3: tasks.append(Task { await store.validate() })
                case 4: tasks.append(Task { await store.refresh() })
                case 5: tasks.append(Task { await store.update(newData: "u\(step)") })
                case 6: tasks.append(Task { await store.clear() })
                case 7: tasks.append(Task { _ = try? await store.invalidate() })
                case 8: fixture.writeElsewhere("e\(step)", forKey: key)
                default: tasks.append(Task { await stores.reloadFromCache(forKey: key) })
                }
                if !tasks.isEmpty, random.next(below: 5) == 0 { tasks[random.next(below: tasks.count)].cancel() }
                if !recorders.isEmpty, random.next(below: 6) == 0 {
                    recorders.remove(at: random.next(below: recorders.count)).cancel()
                }
                for _ in 0..<random.next(below: 3) { await Task.yield() }
            }
            for task in tasks { await task.valueOrCancel }
            for recorder in recorders { recorder.cancel() }
            await fixture.waitUntilIdle()
            #expect(await fixture.manager.trackedKeyCount == 0, "round \(round)")
            #expect(fixture.mostConcurrentCallsOfAKey <= 1, "round \(round)")
        }
    }
}
