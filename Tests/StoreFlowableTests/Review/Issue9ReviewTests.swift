import Foundation
import Testing

@testable import StoreFlowable

// Independent concurrency review of 1c90fb9 (subscription delivery, flight handle), bcee2b8 (re-entrancy)
// and 385349f (write epoch).
//
// Tests marked `DEMONSTRATES A BUG` fail (or, where said, hang until the time limit) on the reviewed code
// and should pass once the bug is fixed. Every other test passed on the reviewed code and is kept as a
// regression test for a promise the review checked.
//
// The file uses its own doubles (below) and no StoreFlowableTesting type, so that it does not depend on
// doubles that are being edited at the same time.

// MARK: - Doubles

/// Waits until the waiting task is cancelled, without sleeping and without a timer.
private func r9WaitUntilCancelled() async {
    let (stream, continuation) = AsyncStream.makeStream(of: Never.self)
    for await _ in stream {}
    // Keeps the continuation (and so the stream) alive until the loop ends.
    continuation.finish()
}

/// Waits for a condition another task makes true shortly, yielding between checks; bounded by the
/// test's time limit (it gives up when the test is cancelled).
private func r9Eventually(_ condition: () async -> Bool) async {
    while !Task.isCancelled, !(await condition()) {
        await Task.yield()
    }
}

/// A thread-safe list of strings.
private final class R9Log: Sendable {
    private let values = LockedValue([String]())
    func add(_ value: String) { values.withLock { $0.append(value) } }
    var all: [String] { values.withLock { $0 } }
}

/// A thread-safe counter.
private final class R9Counter: Sendable {
    private let count = LockedValue(0)
    @discardableResult
    func increment() -> Int { add(1) }
    /// Adds `delta` and returns the new count.
    @discardableResult
    func add(_ delta: Int) -> Int {
        count.withLock {
            $0 += delta
            return $0
        }
    }
    var value: Int { count.withLock { $0 } }
}

/// An in-memory cache of one string that records every write.
private final class R9Cache: Sendable {
    private let state: LockedValue<R9CacheState>

    init(_ value: String? = nil) { state = LockedValue(R9CacheState(value: value)) }

    func load() -> String? { state.withLock { $0.value } }
    func save(_ value: String?) {
        state.withLock {
            $0.value = value
            $0.writes.append(value)
        }
    }
    var value: String? { state.withLock { $0.value } }
    var writes: [String?] { state.withLock { $0.writes } }
}

private struct R9CacheState: Sendable {
    var value: String?
    var writes: [String?] = []
}

/// A callback whose fetch and save run test code that may call back into the library. Values starting
/// with "stale" need refresh.
private struct R9Callback: StoreFlowableCallback {
    typealias FetchHook = @Sendable (_ store: AnyStoreFlowable<String>) async throws -> Void
    typealias SaveHook = @Sendable (_ store: AnyStoreFlowable<String>, _ value: String?) async throws -> Void

    let key: String
    let flowableDataStateManager: FlowableDataStateManager<String>
    let cache: R9Cache
    var onFetch: FetchHook = { _ in }
    var onSave: SaveHook = { _, _ in }
    var fetched: @Sendable (_ call: Int) -> String = { _ in "fresh" }
    let originCalls = R9Counter()

    func loadDataFromCache() async throws -> String? { cache.load() }
    func saveDataToCache(newData: String?) async throws {
        try await onSave(create(), newData)
        cache.save(newData)
    }
    func fetchDataFromOrigin() async throws -> String {
        let call = originCalls.increment()
        try await onFetch(create())
        return fetched(call)
    }
    func needRefresh(cachedData: String) async -> Bool { cachedData.hasPrefix("stale") }
}

/// A callback whose first verdict on a stale value is held until the test lets it go, so that a read can
/// be parked between reading the cache and deciding that the value is stale.
private struct R9SlowVerdictCallback: StoreFlowableCallback {
    let key = "key"
    let flowableDataStateManager: FlowableDataStateManager<String>
    let cache: R9Cache
    let fetched: @Sendable (_ call: Int) -> String
    let originCalls = R9Counter()
    let verdicts = R9Counter()
    let entered = Signal()
    let release = Signal()

    func loadDataFromCache() async throws -> String? { cache.load() }
    func saveDataToCache(newData: String?) async throws { cache.save(newData) }
    func fetchDataFromOrigin() async throws -> String { fetched(originCalls.increment()) }
    func needRefresh(cachedData: String) async -> Bool {
        guard cachedData.hasPrefix("stale") else { return false }
        if verdicts.increment() == 1 {
            entered.open()
            await release.wait()
        }
        return true
    }
}

/// A one-way paged list of `Int`s, starting at page 0 with next cursor 1, up to page 3. Its next-page
/// fetch and its save run test code that may call back into the library.
private struct R9PagedCallback: PaginationStoreFlowableCallback {
    typealias Record = PagedData<[Int], Int>
    typealias Store = AnyPaginationStoreFlowable<[Int], Int>

    let key: String
    let flowableDataStateManager: FlowableDataStateManager<String>
    let cache = LockedValue<Record?>(nil)
    var onNextFetch: @Sendable (_ store: Store) async -> Void = { _ in }
    var onSave: @Sendable (_ store: Store, _ record: Record?) async -> Void = { _, _ in }

    func loadDataFromCache() async throws -> Record? { cache.withLock { $0 } }
    func saveDataToCache(newData: Record?) async throws {
        await onSave(create(), newData)
        cache.withLock { $0 = newData }
    }
    func fetchDataFromOrigin() async throws -> Record { PagedData(data: [0], nextCursor: 1) }
    func fetchNextDataFromOrigin(nextCursor: Int, data: [Int]) async throws -> FetchedPage<[Int], Int> {
        await onNextFetch(create())
        return FetchedPage(data: [nextCursor], cursor: nextCursor < 3 ? nextCursor + 1 : nil)
    }
    func needRefresh(cachedData: [Int]) async -> Bool { false }
}

/// Runs `operation`; when the test is cancelled first (its time limit), runs `unwind` so that a
/// deadlock the test demonstrates does not outlive it, and returns `nil`.
private func r9ValueOrUnwind<Value: Sendable>(
    _ operation: @escaping @Sendable () async throws -> Value, unwind: @Sendable () async -> Void
) async -> Value? {
    let task = Task { try await operation() }
    let result = await withTaskCancellationHandler {
        await task.result
    } onCancel: {
        task.cancel()
    }
    switch result {
    case .success(let value):
        return value
    case .failure(let error):
        if Task.isCancelled { await unwind() }
        Issue.record("no answer: \(error)")
        return nil
    }
}

private func r9IsReentrant(_ error: any Error) -> Bool {
    if case StoreFlowableError.reentrantCall = error { return true }
    return false
}

/// A short description of a state, for comparing what a callback saw.
private func r9Describe(_ state: LoadingState<String>) -> String {
    switch state {
    case .loading(let content): return "loading(\(content ?? "nil"))"
    case .completed(let content, _, _): return "completed(\(content))"
    case .error(_, let error): return r9IsReentrant(error) ? "error(reentrantCall)" : "error(\(error))"
    }
}

// MARK: - 3. Re-entrancy

@Suite(.timeLimit(.minutes(1)))
struct Issue9ReviewReentrancyTests {
    /// DEMONSTRATES A BUG (fails fast on the reviewed code).
    ///
    /// Key "two"'s fetch waits for key "one" (`requireData(from: .origin)`), so the graph holds
    /// two → one. Key "one"'s fetch then subscribes to key "two". Any consumer waiting for "two"'s next
    /// state waits for "two"'s fetch, which waits for this very fetch of "one": by the documented rule
    /// ("the call that would close the cycle is refused the same way"; for `publish()`: it yields
    /// `.error(content: nil, rawError: .reentrantCall)` and finishes) the stream must be refused.
    /// `subscribe` only checks `scope.node == node` and never consults the `WaitGraph`, so the stream is
    /// registered and its first state is `.loading(content: nil)`.
    @Test func aPublishThatClosesACycleOfWaitsIsRefused() async throws {
        let manager = FlowableDataStateManager<String>()
        let firstStates = R9Log()
        let one = LockedValue<R9Callback?>(nil)
        let two = R9Callback(
            key: "two", flowableDataStateManager: manager, cache: R9Cache(),
            onFetch: { _ in
                // two needs one.
                if let one = one.withLock({ $0 }) { _ = try await one.create().requireData(from: .origin) }
            },
            fetched: { _ in "two value" })
        one.withLock {
            $0 = R9Callback(
                key: "one", flowableDataStateManager: manager, cache: R9Cache(),
                onFetch: { _ in
                    // one subscribes to two, whose fetch waits for this fetch of one. Only the first state
                    // is taken, so the test ends either way.
                    var states = two.create().publish().makeAsyncIterator()
                    if let first = await states.next() { firstStates.add(r9Describe(first)) }
                },
                fetched: { _ in "one value" })
        }
        #expect(try await two.create().requireData(from: .origin) == "two value")
        #expect(firstStates.all == ["error(reentrantCall)"])
        await r9Eventually { await manager.trackedKeyCount == 0 }
        #expect(WaitGraph.edgeCount(from: ObjectIdentifier(manager)) == 0)
    }

    /// DEMONSTRATES A BUG (HANGS until the one-minute time limit on the reviewed code; the test then
    /// unwinds the deadlock with an update of "two", so nothing stays blocked).
    ///
    /// The same cycle as above, with the consumer an origin would really write: it waits for "two" to
    /// settle. "two"'s fetch waits for "one"'s fetch, which waits for "two"'s outcome: a deadlock that
    /// promise 13 says cannot happen ("No combination leaves a key's write turn or flight held for ever").
    @Test func anOriginWaitingForAStreamThatClosesACycleGetsAnAnswer() async throws {
        let manager = FlowableDataStateManager<String>()
        let settled = R9Log()
        let one = LockedValue<R9Callback?>(nil)
        let two = R9Callback(
            key: "two", flowableDataStateManager: manager, cache: R9Cache(),
            onFetch: { _ in
                if let one = one.withLock({ $0 }) { _ = try await one.create().requireData(from: .origin) }
            },
            fetched: { _ in "two value" })
        one.withLock {
            $0 = R9Callback(
                key: "one", flowableDataStateManager: manager, cache: R9Cache(),
                onFetch: { _ in
                    for await state in two.create().publish() where !state.r9IsLoading {
                        settled.add(r9Describe(state))
                        break
                    }
                },
                fetched: { _ in "one value" })
        }
        let value = await r9ValueOrUnwind({ try await two.create().requireData(from: .origin) }) {
            // An update of "two" supersedes its fetch (which cancels its wait for "one") and settles the
            // stream "one"'s fetch waits on.
            await two.create().update(newData: "unwound")
        }
        #expect(value == "two value")
        #expect(settled.all == ["error(reentrantCall)"])
    }

    /// DEMONSTRATES A BUG (HANGS until the one-minute time limit on the reviewed code; the test then
    /// unwinds the deadlock).
    ///
    /// The other order: "one"'s fetch subscribes to "two" first and waits for it to settle, then "two"'s
    /// fetch (started for that stream) requires "one". The stream recorded no edge one → two, so the
    /// wait two → one is not seen to close a cycle and is served: both fetches wait for each other.
    @Test func aWaitThatClosesACycleThroughAStreamIsRefused() async throws {
        let manager = FlowableDataStateManager<String>()
        let seenByTwo = R9Log()
        let settled = R9Log()
        let one = LockedValue<R9Callback?>(nil)
        let two = R9Callback(
            key: "two", flowableDataStateManager: manager, cache: R9Cache(),
            onFetch: { _ in
                guard let one = one.withLock({ $0 }) else { return }
                do {
                    _ = try await one.create().requireData(from: .origin)
                    seenByTwo.add("served")
                } catch {
                    seenByTwo.add(r9IsReentrant(error) ? "refused" : "other: \(error)")
                }
            },
            fetched: { _ in "two value" })
        one.withLock {
            $0 = R9Callback(
                key: "one", flowableDataStateManager: manager, cache: R9Cache(),
                onFetch: { _ in
                    for await state in two.create().publish() where !state.r9IsLoading {
                        settled.add(r9Describe(state))
                        break
                    }
                },
                fetched: { _ in "one value" })
        }
        let first = try #require(one.withLock { $0 })
        let value = await r9ValueOrUnwind({ try await first.create().requireData(from: .origin) }) {
            await two.create().update(newData: "unwound")
        }
        #expect(value == "one value")
        #expect(seenByTwo.all.first == "refused")
        #expect(settled.all == ["completed(two value)"])
    }

    /// Regression: a callback waiting for another key leaves no edge behind when its wait is cancelled
    /// (the caller gives up, the flight is abandoned and cancelled) or when the awaited fetch throws.
    @Test func edgesAreRemovedWhenAWaitIsCancelledOrFails() async throws {
        let manager = FlowableDataStateManager<String>()
        let entered = Signal()
        let leaf = R9Callback(
            key: "leaf", flowableDataStateManager: manager, cache: R9Cache(),
            onFetch: { _ in
                entered.open()
                await r9WaitUntilCancelled()
                throw CancellationError()
            })
        let root = R9Callback(
            key: "root", flowableDataStateManager: manager, cache: R9Cache(),
            onFetch: { _ in _ = try await leaf.create().requireData(from: .origin) })
        let caller = Task { try await root.create().requireData(from: .origin) }
        await entered.wait()
        #expect(WaitGraph.edgeCount(from: ObjectIdentifier(manager)) == 1)
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        await r9Eventually { await manager.trackedKeyCount == 0 }
        #expect(WaitGraph.edgeCount(from: ObjectIdentifier(manager)) == 0)

        struct LeafFailed: Error {}
        let failingLeaf = R9Callback(
            key: "failing leaf", flowableDataStateManager: manager, cache: R9Cache(),
            onFetch: { _ in throw LeafFailed() })
        let root2 = R9Callback(
            key: "root2", flowableDataStateManager: manager, cache: R9Cache(),
            onFetch: { _ in _ = try await failingLeaf.create().requireData(from: .origin) })
        await #expect(throws: LeafFailed.self) { try await root2.create().requireData(from: .origin) }
        #expect(WaitGraph.edgeCount(from: ObjectIdentifier(manager)) == 0)
    }

    /// Regression: updates queued from inside a flight's save (deferred: the call returns at once) keep
    /// their place in the write queue, before an update made after the flight returned; none is lost and
    /// subscribers end on the last one.
    @Test func deferredUpdatesFromASaveKeepTheirOrder() async throws {
        let manager = FlowableDataStateManager<String>()
        let cache = R9Cache()
        let callback = R9Callback(
            key: "key", flowableDataStateManager: manager, cache: cache,
            onSave: { store, value in
                guard value == "fresh" else { return }
                await store.update(newData: "nested 1")
                await store.clear()
                await store.update(newData: "nested 2")
            })
        #expect(try await callback.create().requireData(from: .origin) == "fresh")
        await callback.create().update(newData: "outer")
        await r9Eventually { await manager.trackedKeyCount == 0 }
        #expect(cache.writes == ["fresh", "nested 1", nil, "nested 2", "outer"])
        #expect(cache.value == "outer")
        #expect(try await callback.create().requireData(from: .cache) == "outer")
    }

    /// Regression: from inside its key's own flight save, every call that would wait for the save
    /// returns at once (refresh, validate of a stale cache, getData from the origin, a stream), and the
    /// key is usable afterwards.
    @Test func waitsFromInsideAFlightSaveAreAnsweredAtOnce() async throws {
        let manager = FlowableDataStateManager<String>()
        let seen = R9Log()
        let callback = R9Callback(
            key: "key", flowableDataStateManager: manager, cache: R9Cache("stale"),
            onSave: { store, value in
                guard value == "fresh" else { return }
                await store.refresh()
                await store.validate()
                seen.add(await store.getData(from: .origin) ?? "nil")
                for await state in store.publish() { seen.add(r9Describe(state)) }
                seen.add("done")
            })
        #expect(try await callback.create().requireData() == "fresh")
        #expect(seen.all == ["nil", "error(reentrantCall)", "done"])
        #expect(callback.originCalls.value == 1)
        await r9Eventually { await manager.trackedKeyCount == 0 }
        #expect(WaitGraph.edgeCount(from: ObjectIdentifier(manager)) == 0)
    }

    /// Regression (paging): a page fetch requesting its own key's next page, and a page merge's save
    /// requesting a page and updating its own key, are answered at once; the update is written after
    /// the page and nothing hangs.
    @Test func pageCallbacksCallingTheirOwnKeyAreAnswered() async throws {
        let manager = FlowableDataStateManager<String>()
        let seen = R9Log()
        let callback = R9PagedCallback(
            key: "list", flowableDataStateManager: manager,
            onNextFetch: { store in
                _ = await store.requestNextData(continueWhenError: true)
                seen.add("fetch: page request returned")
            },
            onSave: { store, record in
                // The merge of page 1 (data [0, 1]).
                guard record?.data == [0, 1] else { return }
                _ = await store.requestNextData(continueWhenError: true)
                await store.refresh()
                seen.add("save: page request and refresh returned")
                await store.update(newData: [42])
                seen.add("save: update returned")
            })
        let store = callback.create()
        #expect(try await store.requireData() == [0])
        _ = await store.requestNextData(continueWhenError: true)
        #expect(
            seen.all == [
                "fetch: page request returned", "save: page request and refresh returned", "save: update returned",
            ])
        await r9Eventually { await manager.trackedKeyCount == 0 }
        // The deferred update kept the record's cursor and was written after the page.
        #expect(callback.cache.withLock { $0?.data } == [42])
        #expect(callback.cache.withLock { $0?.nextCursor } == 2)
        #expect(WaitGraph.edgeCount(from: ObjectIdentifier(manager)) == 0)
    }
}

extension LoadingState {
    fileprivate var r9IsLoading: Bool {
        if case .loading = self { return true }
        return false
    }
}

// MARK: - 4. Write epoch

@Suite(.timeLimit(.minutes(1)))
struct Issue9ReviewStaleReadTests {
    /// Regression: a read overtaken by a fetch reads again, but when what the fetch wrote is itself stale
    /// (`needRefresh` says so) the caller still fetches: it never returns a stale value as if valid and
    /// never skips the fetch it needs.
    @Test(arguments: ["requireData", "getData", "validate"])
    func aReadAgainThatFindsStaleDataStillFetches(call: String) async throws {
        let callback = R9SlowVerdictCallback(
            flowableDataStateManager: FlowableDataStateManager(), cache: R9Cache("stale"),
            fetched: { $0 == 1 ? "stale from origin" : "fresh \($0)" })
        let store = callback.create()
        let slow = Task { () -> String? in
            switch call {
            case "requireData": return try? await store.requireData()
            case "getData": return await store.getData()
            default:
                await store.validate()
                return try? await store.requireData(from: .cache)
            }
        }
        await callback.entered.wait()
        // Another caller fetches and writes a value that is stale as soon as it is written.
        #expect(try await store.requireData() == "stale from origin")
        callback.release.open()
        let value = await withTaskCancellationHandler {
            await slow.value
        } onCancel: {
            slow.cancel()
        }
        #expect(value == "fresh 2")
        #expect(callback.originCalls.value == 2)
        #expect(callback.cache.value == "fresh 2")
    }

    /// Regression: a read overtaken by a `clear()` reads again, finds nothing and fetches; it does not
    /// return `nil` or loop.
    @Test func aReadOvertakenByAClearFetches() async throws {
        let callback = R9SlowVerdictCallback(
            flowableDataStateManager: FlowableDataStateManager(), cache: R9Cache("stale"),
            fetched: { "fresh \($0)" })
        let store = callback.create()
        let slow = Task { try? await store.requireData() }
        await callback.entered.wait()
        await store.clear()
        callback.release.open()
        let value = await withTaskCancellationHandler {
            await slow.value
        } onCancel: {
            slow.cancel()
        }
        #expect(value == "fresh 1")
        #expect(callback.originCalls.value == 1)
    }
}

// MARK: - 2. Flight handle

@Suite(.timeLimit(.minutes(1)))
struct Issue9ReviewFlightHandleTests {
    /// DEMONSTRATES A BUG (fails on the reviewed code; probabilistic: on a 2-core Linux machine about
    /// one start in fifty runs its operation uncancelled when the pool has an idle thread, so the test
    /// stops at the first occurrence; it gives up after 100,000 starts, which takes about a second).
    ///
    /// `FlightHandle` promises "A handle cancelled before its task starts starts it cancelled", and
    /// `runFlight`/`runPageFlight` rely on it: "A flight cancelled before its task started never calls
    /// the origin". `start(_:)` creates the task with `Task(operation:)` and cancels it only afterwards,
    /// in its second critical region; the task is enqueued at creation, and an idle pool thread can run
    /// its first instructions (`Task.checkCancellation()`, then the origin call) before `task.cancel()`
    /// is reached. (The same race existed before 1c90fb9; the new comment claims it cannot happen.)
    @Test func aHandleCancelledBeforeItStartsNeverRunsItsOperationUncancelled() async {
        let rounds = 500
        let startsPerRound = 200
        let uncancelled = R9Counter()
        var starts = 0
        for _ in 0..<rounds where uncancelled.value == 0 {
            let (finished, finish) = AsyncStream.makeStream(of: Void.self)
            // Started from a thread of its own, in a burst, while the pool is idle: the pool's threads
            // are then awake and free to run a new task at once.
            Thread.detachNewThread {
                for _ in 0..<startsPerRound {
                    let handle = FlightHandle()
                    handle.cancel()
                    handle.start {
                        if !Task.isCancelled { uncancelled.increment() }
                        finish.yield()
                    }
                }
            }
            var count = 0
            for await _ in finished {
                count += 1
                if count == startsPerRound { break }
            }
            starts += startsPerRound
        }
        #expect(uncancelled.value == 0, "\(uncancelled.value) of \(starts) pre-cancelled flights ran uncancelled")
    }

    /// Regression: a cancel racing `start` always cancels the task (each operation waits for its
    /// cancellation, so a lost cancel hangs), and starting twice creates one task.
    @Test func aCancelRacingStartAlwaysCancelsAndStartTwiceRunsOnce() async {
        let runs = 2_000
        let started = R9Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<runs {
                let handle = FlightHandle()
                let done = Signal()
                let operation: @Sendable () async -> Void = {
                    started.increment()
                    await r9WaitUntilCancelled()
                    done.open()
                }
                group.addTask { handle.start(operation) }
                group.addTask { handle.start(operation) }
                group.addTask { handle.cancel() }
                group.addTask { await done.wait() }
            }
        }
        #expect(started.value == runs)
    }
}

// MARK: - 1. Subscription delivery

@Suite(.timeLimit(.minutes(1)))
struct Issue9ReviewSubscriptionTests {
    /// Regression: deliveries from many threads at once, out of order, reach the stream in increasing
    /// order, at most once each, and the stream ends on the newest one; `present` of a paged stream runs
    /// on one thread at a time, outside the lock.
    @Test(arguments: ["direct", "presenting"])
    func concurrentDeliveriesArriveInOrderAndEndOnTheNewest(kind: String) async {
        for _ in 0..<100 {
            let (stream, continuation) = AsyncStream.makeStream(
                of: LoadingState<Int>.self, bufferingPolicy: .bufferingNewest(1))
            let inPresent = R9Counter()
            let overlaps = R9Counter()
            let subscription: Subscription
            if kind == "direct" {
                subscription = DirectSubscription(continuation)
            } else {
                subscription = PresentingSubscription<Int, Int>(continuation) { state in
                    if inPresent.increment() > 1 { overlaps.increment() }
                    defer { inPresent.add(-1) }
                    return state
                }
            }
            #expect(subscription.activate(1))
            let consumer = Task { () -> [Int] in
                var seen: [Int] = []
                for await state in stream {
                    if case .completed(let value, _, _) = state { seen.append(value) }
                }
                return seen
            }
            let last = 400
            let workers = 4
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask {
                        for sequence in stride(from: 1 + worker, through: last, by: workers) {
                            subscription.deliver(.completed(sequence as ErasedData), sequence: UInt64(sequence))
                        }
                    }
                }
            }
            // Every deliverer has returned, so the newest state has been yielded.
            continuation.finish()
            let seen = await consumer.value
            #expect(seen == seen.sorted() && Set(seen).count == seen.count)
            #expect(seen.last == last)
            #expect(overlaps.value == 0)
        }
    }

    /// Regression: nothing is locked while a state is handed to the stream. From inside the delivery of
    /// a state (a paged stream's `present`), a newer state delivered on the same thread is left pending
    /// and yielded right after it, and `terminate()` (what a cancelled consumer's termination handler
    /// calls) returns at once instead of waiting for the delivery. (Before 1c90fb9 the state was yielded
    /// under the subscription's non-recursive mutex, so this re-entry would have deadlocked.)
    @Test func aDeliveryReenteredFromItsOwnYieldNeitherBlocksNorLosesTheNewerState() async {
        let (stream, continuation) = AsyncStream.makeStream(
            of: LoadingState<Int>.self, bufferingPolicy: .unbounded)
        let box = LockedValue<Subscription?>(nil)
        let removed = LockedValue<UInt64?>(nil)
        let subscription = PresentingSubscription<Int, Int>(continuation) { state in
            if case .completed(1, _, _) = state, let subscription = box.withLock({ $0 }) {
                subscription.deliver(.completed(2 as ErasedData), sequence: 2)
                subscription.deliver(.completed(3 as ErasedData), sequence: 3)
            }
            if case .completed(3, _, _) = state, let subscription = box.withLock({ $0 }) {
                let id = subscription.terminate()
                removed.withLock { $0 = id }
            }
            return state
        }
        box.withLock { $0 = subscription }
        #expect(subscription.activate(7))
        subscription.deliver(.completed(1 as ErasedData), sequence: 1)
        // Delivered after the termination was recorded: dropped.
        subscription.deliver(.completed(4 as ErasedData), sequence: 4)
        continuation.finish()
        var seen: [Int] = []
        for await state in stream {
            if case .completed(let value, _, _) = state { seen.append(value) }
        }
        // 2 was replaced by the newer pending 3 before the deliverer picked it up.
        #expect(seen == [1, 3])
        #expect(removed.withLock { $0 } == 7)
    }

    /// Regression: a stream terminated while states are being delivered to it is removed exactly once
    /// and gets nothing after its termination was recorded by the drainer.
    @Test func terminationRacingDeliveriesRemovesTheStreamOnce() async {
        for round in 0..<200 {
            let (stream, continuation) = AsyncStream.makeStream(
                of: LoadingState<Int>.self, bufferingPolicy: .bufferingNewest(1))
            let subscription = DirectSubscription(continuation)
            #expect(subscription.activate(UInt64(round + 1)))
            let removals = R9Counter()
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<3 {
                    group.addTask {
                        for sequence in stride(from: 1 + worker, through: 90, by: 3) {
                            subscription.deliver(.completed(sequence as ErasedData), sequence: UInt64(sequence))
                        }
                    }
                }
                group.addTask {
                    for _ in 0..<3 where subscription.terminate() != nil { removals.increment() }
                }
            }
            #expect(removals.value == 1)
            #expect(!subscription.activate(99))
            continuation.finish()
            for await _ in stream {}
        }
    }
}
