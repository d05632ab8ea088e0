import StoreFlowableTesting
import Testing

@testable import StoreFlowable

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Review of `BatchedOrigin` and `BatchState`: origin calls nobody waits for, user code run inside a
/// caller's cancellation handler, batches finishing while their callers leave, windows ending while a
/// batch fills, and nothing left behind.
@Suite("Issue13Review: batching", .serialized, .timeLimit(.minutes(3)))
struct Issue13ReviewBatchTests {
    static let window = Duration.milliseconds(5)
    static let rounds = isRunningUnderThreadSanitizer ? 200 : 1_000

    // MARK: Suspicion 1: an origin call nobody waits for

    /// Every caller of a batch leaves after the window dispatched it but before its task started (the
    /// observer runs in that gap, on the window task): the task starts cancelled and must return without
    /// calling the origin, since nobody waits for its answer.
    @Test func aBatchWhoseCallersAllLeftBeforeItsTaskStartedNeverCallsTheOrigin() async {
        for round in 0..<20 where !Task.isCancelled {
            let (origin, calls, leftInTime) = await abandonABatchBeforeItsTaskStarts()
            // Once the batcher is gone, its tasks have ended: the batch task has had every chance to call.
            await waitUntil { origin.object == nil }
            #expect(origin.object == nil, "round \(round): the batcher's tasks ended")
            #expect(leftInTime, "round \(round): the callers left while the observer waited")
            #expect(calls.all.isEmpty, "round \(round): the origin was called for nobody: \(calls.all)")
        }
    }

    /// Dispatches a batch of three callers whose observer cancels them all and waits until they have
    /// left; returns the batcher (weakly), its calls, and whether the callers left in time.
    private func abandonABatchBeforeItsTaskStarts() async -> (Weak, CallLog, Bool) {
        let clock = ManualClock()
        let calls = CallLog()
        let hook = DispatchHook()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock, observer: hook) { keys in
            calls.begin(keys)
            defer { calls.end(keys) }
            return values(of: keys)
        }
        let callers = [1, 2, 2].map { key in BatchCaller(of: origin, key: key) }
        let leftInTime = LockedValue<Bool?>(nil)
        hook.set { [weak origin] in
            for caller in callers { caller.cancel() }
            let left = spin { (origin?.waitingCallerCount ?? 0) == 0 }
            leftInTime.withLock { $0 = left }
        }
        await dispatchPending(of: origin, on: clock, callers: 3)
        for caller in callers {
            await #expect(throws: CancellationError.self) { try await caller.value }
        }
        await waitUntil { leftInTime.withLock { $0 } != nil }
        return (Weak(object: origin), calls, leftInTime.withLock { $0 } == true)
    }

    // MARK: Suspicion 2: user code inside a caller's cancellation handler

    /// A caller is cancelled by a thread holding a lock of the app's (a request registry cancelling its
    /// requests under its lock); the batch function's own cancellation handler takes that lock (to take
    /// its request off the registry). Run inside the caller's cancellation handler, on the cancelling
    /// thread, that handler would wait for the lock its own thread holds: a deadlock no time limit ends.
    @Test func theBatchFunctionsCancellationHandlerDoesNotRunOnTheThreadCancellingACaller() async {
        let clock = ManualClock()
        let registry = Registry()
        let probe = Probe()
        let handlerSawLockHeld = LockedValue<[Bool]>([])
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            calls.begin(keys)
            defer { calls.end(keys) }
            return try await withTaskCancellationHandler {
                try await probe.runUntilCancelled(returning: values(of: keys))
            } onCancel: {
                // A real handler would take `registry`'s lock here.
                handlerSawLockHeld.withLock { $0.append(registry.isHeldByThisThread) }
            }
        }
        let caller = BatchCaller(of: origin, key: 1)
        await dispatchPending(of: origin, on: clock, callers: 1)
        await waitUntil { calls.count == 1 }
        registry.hold { caller.cancel() }
        await #expect(throws: CancellationError.self) { try await caller.value }
        await waitUntil { !handlerSawLockHeld.withLock { $0 }.isEmpty }
        #expect(handlerSawLockHeld.withLock { $0 } == [false], "would deadlock: the lock is its own thread's")
        await waitUntil { probe.sawCancellationSoFar }
        #expect(probe.sawCancellationSoFar, "the batch function is still cancelled")
        #expect(origin.runningBatchCount == 0)
    }

    /// The same with the window's clock: the last caller of a pending batch leaving cancels the window's
    /// sleep, whose cancellation handler is the clock's code (the app's clock).
    @Test func theClocksCancellationHandlerDoesNotRunOnTheThreadCancellingACaller() async {
        let manual = ManualClock()
        let registry = Registry()
        let handlerSawLockHeld = LockedValue<[Bool]>([])
        let clock = HookedClock(base: manual) {
            handlerSawLockHeld.withLock { $0.append(registry.isHeldByThisThread) }
        }
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            calls.begin(keys)
            defer { calls.end(keys) }
            return values(of: keys)
        }
        let caller = BatchCaller(of: origin, key: 1)
        await waitUntil { origin.waitingCallerCount == 1 }
        await manual.sleepers(atLeast: 1)
        registry.hold { caller.cancel() }
        await #expect(throws: CancellationError.self) { try await caller.value }
        await waitUntil { !handlerSawLockHeld.withLock { $0 }.isEmpty }
        #expect(handlerSawLockHeld.withLock { $0 } == [false], "would deadlock: the lock is its own thread's")
        #expect(origin.pendingKeyCount == 0)
        #expect(calls.all.isEmpty)
    }

    // MARK: Suspicion 3: a batch finishing while its callers leave and new callers arrive

    /// The batch's origin call ends while its callers are cancelled and a new caller of one of its keys
    /// arrives: each cancelled caller gets its value or `CancellationError`, the new caller is answered
    /// (by the ending batch or by a new one), and nothing is left behind.
    @Test func callersLeavingAndArrivingAsTheBatchFinishesAreAllAnswered() async {
        var failures: [String] = []
        for round in 0..<Self.rounds where !Task.isCancelled {
            let clock = ManualClock()
            let gate = Gate()
            let calls = CallLog()
            let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
                let call = calls.begin(keys)
                defer { calls.end(keys) }
                if call == 1 { await gate.wait() }
                return values(of: keys, call: call)
            }
            let leaving = [0, 1, 1].map { key in BatchCaller(of: origin, key: key) }
            let staying = BatchCaller(of: origin, key: 1)
            await dispatchPending(of: origin, on: clock, callers: 4)
            await waitUntil { calls.count == 1 }
            let release = Task { gate.open() }
            let arriving = BatchCaller(of: origin, key: 0)
            for caller in leaving { caller.cancel() }
            await release.value
            // The new caller may have started a new batch: end its window.
            await serve([arriving], of: origin, on: clock)
            for (key, caller) in zip([0, 1, 1], leaving) {
                switch await caller.result {
                case .success(let value) where value == "v\(key)#1": break
                case .failure(is CancellationError): break
                case let other: failures.append("round \(round): leaving caller of \(key): \(other)")
                }
            }
            let stayed = await staying.result
            if case .success("v1#1") = stayed {} else { failures.append("round \(round): staying: \(stayed)") }
            let arrived = await arriving.result
            switch arrived {
            case .success("v0#1"), .success("v0#2"): break
            default: failures.append("round \(round): arriving: \(arrived)")
            }
            failures += leftovers(of: origin, round: round)
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    /// Every caller of a running batch leaves (its origin call ignores cancellation and goes on); a new
    /// caller of its key starts a new batch, and the old batch ends at the same moment: the new caller
    /// gets the new batch's answer, never the old one's and never nothing.
    @Test func aKeyLoadedAgainWhileItsAbandonedBatchEndsGetsTheNewBatchsAnswer() async {
        var failures: [String] = []
        for round in 0..<Self.rounds where !Task.isCancelled {
            let clock = ManualClock()
            let gate = Gate()
            let calls = CallLog()
            let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
                let call = calls.begin(keys)
                defer { calls.end(keys) }
                if call == 1 { await gate.wait() }
                return values(of: keys, call: call)
            }
            let first = BatchCaller(of: origin, key: 7)
            await dispatchPending(of: origin, on: clock, callers: 1)
            await waitUntil { calls.count == 1 }
            first.cancel()
            let firstResult = await first.result
            if case .failure(is CancellationError) = firstResult {
            } else {
                failures.append("round \(round): first: \(firstResult)")
            }
            let release = Task { gate.open() }
            let second = BatchCaller(of: origin, key: 7)
            await serve([second], of: origin, on: clock)
            await release.value
            let secondResult = await second.result
            if case .success("v7#2") = secondResult {} else { failures.append("round \(round): \(secondResult)") }
            failures += leftovers(of: origin, round: round)
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    // MARK: Suspicion 4: the window ends while the batch fills

    /// The key that fills a batch arrives as its window ends: the batch goes once, by size or by window
    /// (the last key then in a batch of its own); every key is sent exactly once, except key 0, whose
    /// second caller may come after the batch holding it was sent, and every caller gets its value.
    @Test func theWindowEndingAsTheBatchFillsSendsEveryKeyOnce() async {
        var failures: [String] = []
        for round in 0..<Self.rounds where !Task.isCancelled {
            let clock = ManualClock()
            let calls = CallLog()
            let origin = BatchedOrigin<Int, String>(window: Self.window, maxBatchSize: 3, clock: clock) { keys in
                calls.begin(keys)
                defer { calls.end(keys) }
                await Task.yield()
                return values(of: keys)
            }
            var callers = [0, 1, 1].map { key in BatchCaller(of: origin, key: key) }
            await waitUntil { origin.waitingCallerCount == 3 }
            await clock.sleepers(atLeast: 1)
            let window = Task { clock.advance(by: Self.window) }
            callers += [2, 0, 3].map { key in BatchCaller(of: origin, key: key) }
            await window.value
            await serve(callers, of: origin, on: clock)
            for (key, caller) in zip([0, 1, 1, 2, 0, 3], callers) {
                let result = await caller.result
                if case .success(let value) = result, value == "v\(key)" { continue }
                failures.append("round \(round): caller of \(key): \(result)")
            }
            let sent = calls.all.flatMap { $0 }
            if calls.all.contains(where: { $0.isEmpty || $0.count > 3 || Set($0).count != $0.count }) {
                failures.append("round \(round): calls \(calls.all)")
            }
            // Key 0 may be sent twice: its second caller may come after the batch holding it was sent,
            // and a batch already sent is never joined (it may have read the origin before the caller
            // came). Every other key exactly once.
            if Set(sent) != [0, 1, 2, 3] || sent.filter({ $0 != 0 }).count != 3 {
                failures.append("round \(round): sent \(calls.all)")
            }
            if calls.overlaps.contains(where: { $0 != 0 }) {
                failures.append("round \(round): keys in two calls at once: \(calls.overlaps)")
            }
            failures += leftovers(of: origin, round: round)
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    // MARK: Task-local values the batch inherits

    /// A batch function that sends a `POST` forbids its retry (`SimpleNetworkLoader` does). The batch's
    /// task inherits the attempt of the caller that started the batch, so the refusal reached that
    /// caller's store fetch only: the other key's fetch retried and sent the `POST` again.
    @Test func forbiddingTheRetryInABatchFunctionForbidsItForEveryKey() async {
        let batchClock = ManualClock()
        let retryClock = ManualClock()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: batchClock) { keys in
            calls.begin(keys)
            defer { calls.end(keys) }
            FetchAttempt.current?.forbidRetry()
            throw AdvisedError.transient
        }
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: .none)
        let store = KeyedStore(
            cache: MemoryCache<Int, String>(policy: FreshnessPolicy(freshFor: .seconds(60))),
            manager: FlowableDataStateManager(fetchPolicy: FetchPolicy(retry: policy, clock: retryClock))
        ) { key in try await origin.load(key) }
        let ended = LockedValue(0)
        let loads = [1, 2].map { key in
            Task {
                defer { ended.withLock { $0 += 1 } }
                _ = try await store[key].requireData()
            }
        }
        await waitUntil { origin.waitingCallerCount == 2 }
        // Ends windows and backoffs until both loads have ended (a retried key needs both).
        while ended.withLock({ $0 }) < 2 && !Task.isCancelled {
            if origin.pendingKeyCount > 0 { batchClock.advance(by: Self.window) }
            retryClock.advance(by: .seconds(1))
            await Task.yield()
        }
        for load in loads {
            await #expect(throws: AdvisedError.self) { try await load.value }
        }
        // One call with both keys, in whichever order they arrived.
        #expect(calls.all.map { $0.sorted() } == [[1, 2]], "the POST was sent again for a key: \(calls.all)")
    }

    // MARK: Cancellation at every moment

    @Test(arguments: 0..<4)
    func callersCancelledAtEveryMomentLeaveNothingBehindAndNoKeyNobodyWaitedFor(part: Int) async {
        let perPart = Self.rounds / 4
        var failures: [String] = []
        for round in 0..<perPart where !Task.isCancelled {
            failures += await stressRound(seed: UInt64(part * perPart + round))
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    /// When a caller is cancelled.
    private enum Moment: CaseIterable {
        case never, beforeCalling, whilePending, atDispatch, whileRunning, asItFinishes
    }

    private func stressRound(seed: UInt64) async -> [String] {
        var random = SplitMix64(seed: seed)
        let clock = ManualClock()
        // The origin answers at once, at a gate (ignoring cancellation), or at the end of a sleep on a
        // clock of its own (ending at once when cancelled).
        let answers = Int.random(in: 0..<3, using: &random)
        // Half the rounds with room for every key: then only the window dispatches.
        let maxBatchSize = Bool.random(using: &random) ? 100 : Int.random(in: 1...6, using: &random)
        let gate = Gate()
        let answer = ManualClock()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, maxBatchSize: maxBatchSize, clock: clock) {
            keys in
            calls.begin(keys)
            defer { calls.end(keys) }
            switch answers {
            case 0: break
            case 1: await gate.wait()
            default: try await answer.sleep(until: ManualClock.Instant(offset: .seconds(1)))
            }
            return values(of: keys)
        }
        let plan = (0..<16).map { _ in
            (
                key: Int.random(in: 0..<8, using: &random),
                moment: Moment.allCases[Int.random(in: 0..<Moment.allCases.count, using: &random)]
            )
        }
        let ended = LockedValue(0)
        let callers = plan.map { step in
            let caller = BatchCaller(
                Task {
                    defer { ended.withLock { $0 += 1 } }
                    return try await origin.load(step.key)
                })
            if step.moment == .beforeCalling { caller.cancel() }
            return caller
        }
        func cancelled(at moment: Moment) -> [BatchCaller] {
            zip(plan, callers).filter { $0.0.moment == moment }.map(\.1)
        }
        // Every caller has joined a batch or ended (ended is read first, so that none counts twice).
        await waitUntil { ended.withLock { $0 } + origin.waitingCallerCount >= plan.count }
        for caller in cancelled(at: .whilePending) { caller.cancel() }
        // Those callers have left before the window ends.
        for caller in cancelled(at: .whilePending) + cancelled(at: .beforeCalling) { _ = await caller.result }
        let window = Task { clock.advance(by: Self.window) }
        for caller in cancelled(at: .atDispatch) { caller.cancel() }
        await window.value
        while origin.pendingKeyCount > 0 && !Task.isCancelled {
            clock.advance(by: Self.window)
            await Task.yield()
        }
        for caller in cancelled(at: .whileRunning) { caller.cancel() }
        let release = Task {
            gate.open()
            answer.advance(by: .seconds(1))
        }
        for caller in cancelled(at: .asItFinishes) { caller.cancel() }
        await release.value

        let context = "seed \(seed), maxBatchSize \(maxBatchSize), answers \(answers)"
        var failures: [String] = []
        for (step, caller) in zip(plan, callers) {
            switch await caller.result {
            case .success(let value) where value == "v\(step.key)": break
            case .failure(is CancellationError) where step.moment != .never: break
            case let outcome: failures.append("\(context): caller of \(step.key) (\(step.moment)): \(outcome)")
            }
        }
        failures += leftovers(of: origin, round: Int(seed))
        let asked = Set(plan.map(\.key))
        for keys in calls.all
        where keys.isEmpty || keys.count > maxBatchSize || Set(keys).count != keys.count
            || !Set(keys).isSubset(of: asked)
        {
            failures.append("\(context): a call with keys \(keys)")
        }
        if maxBatchSize == 100 {
            // Nothing went before the window: a key whose callers had all left by then is never sent.
            let gone: [Moment] = [.beforeCalling, .whilePending]
            let kept = Set(plan.filter { !gone.contains($0.moment) }.map(\.key))
            let sent = Set(calls.all.flatMap { $0 })
            if !sent.isSubset(of: kept) {
                failures.append("\(context): sent \(sent.subtracting(kept)), whose callers had all left")
            }
        }
        return failures
    }

    // MARK: The state machine alone

    /// Random walks over `BatchState`: after every step the counts agree with the callers that joined
    /// and have not been served or left; no dispatch is empty or holds a key nobody waits for; a caller
    /// never joins a batch already sent; every waiter is served at most once.
    @Test(.disabled(if: isRunningUnderThreadSanitizer, "single-threaded value code: nothing for ThreadSanitizer"))
    func randomWalksKeepTheBookkeepingExact() {
        var failures: [String] = []
        for seed in 0..<UInt64(1_000) {
            var random = SplitMix64(seed: seed)
            let maxBatchSize = Int.random(in: 1...5, using: &random)
            var state = BatchState<Int, Int, Int>(maxBatchSize: maxBatchSize)
            var handles = 0
            let make = { () -> Int in
                handles += 1
                return handles
            }
            // The model: which callers wait, and their keys.
            var waiting: [Int: Int] = [:]
            var served: Set<Int> = []
            var running: [Int: Set<Int>] = [:]
            var pendingBatch: Int?
            var nextWaiter = 0
            func check(_ effects: BatchState<Int, Int, Int>.Effects, _ step: String) {
                if let (_, batch, keys) = effects.dispatch {
                    let waitingKeys = Set(
                        waiting.compactMap { caller, key in
                            state.running[batch]?.entries[key]?.waiters[caller] != nil ? key : nil
                        })
                    if keys.isEmpty || Set(keys) != waitingKeys || keys.count > maxBatchSize {
                        failures.append("seed \(seed) \(step): dispatch \(keys), waiting \(waitingKeys)")
                    }
                    running[batch] = Set(keys)
                    if pendingBatch == batch { pendingBatch = nil }
                }
                if let (_, batch) = effects.startWindow { pendingBatch = batch }
            }
            for step in 0..<60 {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<5:
                    let key = Int.random(in: 0..<6, using: &random)
                    let waiter = nextWaiter
                    nextWaiter += 1
                    let sentBefore = Set(state.running.keys)
                    let (caller, effects) = state.enqueue(key, waiter: waiter, makeHandle: make)
                    if caller != waiter { failures.append("seed \(seed): caller numbers") }
                    for id in sentBefore where state.running[id]?.entries[key]?.waiters[caller] != nil {
                        failures.append("seed \(seed) step \(step): caller \(caller) joined sent batch \(id)")
                    }
                    waiting[caller] = key
                    check(effects, "enqueue \(key)")
                case 5..<7:
                    guard let caller = waiting.keys.randomElement(using: &random) else { continue }
                    waiting[caller] = nil
                    _ = state.leave(caller: caller)
                    // A second leave, or a leave after being served, changes nothing.
                    let again = state.leave(caller: caller)
                    if again.cancel != nil { failures.append("seed \(seed): a second leave cancelled") }
                case 7:
                    if let batch = pendingBatch {
                        check(state.windowEnded(batch: batch, makeHandle: make), "window")
                    }
                default:
                    guard let batch = running.keys.randomElement(using: &random) else { continue }
                    running[batch] = nil
                    for (key, waiters) in state.finish(batch: batch) {
                        for waiter in waiters {
                            if served.contains(waiter) || waiting[waiter] != key {
                                failures.append("seed \(seed): waiter \(waiter) served twice or for \(key)")
                            }
                            served.insert(waiter)
                            waiting[waiter] = nil
                        }
                    }
                }
                if state.callerCount != waiting.count {
                    failures.append("seed \(seed) step \(step): \(state.callerCount) callers, model \(waiting.count)")
                }
                for batch in state.running.values where batch.waiterCount == 0 {
                    failures.append("seed \(seed) step \(step): running batch \(batch.id) with no caller")
                }
                if state.pending?.entries.isEmpty == true { failures.append("seed \(seed): an empty pending batch") }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }
}

// MARK: - Helpers

/// The keys of every call of a batch function, in call order, and whether a key was in two calls at once.
private final class CallLog: Sendable {
    private struct Inner {
        var calls: [[Int]] = []
        var inFlight: [Int: Int] = [:]
        var overlaps: [Int] = []
    }

    private let inner = LockedValue(Inner())

    /// Records a call's start; returns its number, from 1.
    @discardableResult
    func begin(_ keys: [Int]) -> Int {
        inner.withLock { inner in
            inner.calls.append(keys)
            for key in keys {
                if inner.inFlight[key, default: 0] > 0 { inner.overlaps.append(key) }
                inner.inFlight[key, default: 0] += 1
            }
            return inner.calls.count
        }
    }

    func end(_ keys: [Int]) {
        inner.withLock { inner in
            for key in keys { inner.inFlight[key, default: 0] -= 1 }
        }
    }

    var all: [[Int]] { inner.withLock { $0.calls } }
    var count: Int { inner.withLock { $0.calls.count } }
    var overlaps: [Int] { inner.withLock { $0.overlaps } }
}

/// Every key's value: `"v"` and the key, and `"#"` and the call's number when given.
private func values(of keys: [Int], call: Int? = nil) -> [Int: Result<String, any Error>] {
    let suffix = call.map { "#\($0)" } ?? ""
    return Dictionary(keys.map { ($0, .success("v\($0)\(suffix)")) }, uniquingKeysWith: { first, _ in first })
}

/// A batcher held weakly, to see when its tasks have ended.
private struct Weak {
    weak var object: BatchedOrigin<Int, String>?
}

/// An observer running a test's action when a batch is dispatched (on the dispatching task, before the
/// batch's task starts).
private final class DispatchHook: StoreEventObserver {
    private let action = LockedValue<(@Sendable () -> Void)?>(nil)

    func set(_ action: (@Sendable () -> Void)?) {
        self.action.withLock { $0 = action }
    }

    func observe(_ event: StoreEvent) {
        guard case .batchDispatched = event.kind else { return }
        action.withLock { $0 }?()
    }
}

/// A lock of the app's, as a request registry holds while it cancels its requests; tells whether the
/// current thread holds it (where taking it again would never return).
private final class Registry: Sendable {
    private let owner = LockedValue<pthread_t?>(nil)

    func hold(_ body: () -> Void) {
        owner.withLock { $0 = pthread_self() }
        body()
        owner.withLock { $0 = nil }
    }

    var isHeldByThisThread: Bool {
        owner.withLock { owner in owner.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }
}

/// A clock of the app's: a manual clock whose sleeps run `onCancel` when cancelled.
private struct HookedClock: Clock {
    let base: ManualClock
    let onCancel: @Sendable () -> Void

    var now: ManualClock.Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }

    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        try await withTaskCancellationHandler {
            try await base.sleep(until: deadline, tolerance: tolerance)
        } onCancel: {
            onCancel()
        }
    }
}

/// Returns once `condition` holds, yielding in between (never sleeping); returns early when the test
/// is cancelled at its time limit.
private func waitUntil(_ condition: () -> Bool) async {
    while !condition() && !Task.isCancelled { await Task.yield() }
}

/// Busy-waits (yielding the thread, never sleeping) until `condition` holds; `false` when it does not
/// hold after many tries. For a synchronous hook that must hold its task until other tasks move.
private func spin(until condition: () -> Bool) -> Bool {
    for _ in 0..<20_000_000 {
        if condition() { return true }
        sched_yield()
    }
    return condition()
}

/// Waits until `callers` callers wait in `origin` and its window timer sleeps, then ends the window.
private func dispatchPending(of origin: BatchedOrigin<Int, String>, on clock: ManualClock, callers: Int) async {
    await waitUntil { origin.waitingCallerCount >= callers }
    await clock.sleepers(atLeast: 1)
    clock.advance(by: Issue13ReviewBatchTests.window)
}

/// Ends windows until every one of `callers` has ended.
private func serve(_ callers: [BatchCaller], of origin: BatchedOrigin<Int, String>, on clock: ManualClock) async {
    let ended = LockedValue(0)
    let watchers = callers.map { caller in
        Task {
            _ = await caller.result
            ended.withLock { $0 += 1 }
        }
    }
    while ended.withLock({ $0 }) < callers.count && !Task.isCancelled {
        if origin.pendingKeyCount > 0 { clock.advance(by: Issue13ReviewBatchTests.window) }
        await Task.yield()
    }
    for watcher in watchers { watcher.cancel() }
}

/// What a batcher still holds once every caller has ended: its counts and its private maps.
private func leftovers(of origin: BatchedOrigin<Int, String>, round: Int) -> [String] {
    func child(_ value: Any, _ label: String) -> Any? {
        Mirror(reflecting: value).children.first { $0.label == label }?.value
    }
    var found: [String] = []
    if origin.pendingKeyCount != 0 { found.append("round \(round): pendingKeyCount \(origin.pendingKeyCount)") }
    if origin.runningBatchCount != 0 { found.append("round \(round): runningBatchCount \(origin.runningBatchCount)") }
    if origin.waitingCallerCount != 0 {
        found.append("round \(round): waitingCallerCount \(origin.waitingCallerCount)")
    }
    guard let locked = child(origin, "state"), let state = child(locked, "value") else {
        return found + ["round \(round): the batcher's state is not where the test looks"]
    }
    for label in ["running", "callers"] {
        guard let map = child(state, label) else {
            found.append("round \(round): no \(label)")
            continue
        }
        let count = Mirror(reflecting: map).children.count
        if count != 0 { found.append("round \(round): \(label) holds \(count)") }
    }
    return found
}
