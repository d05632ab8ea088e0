import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// The batcher end to end, on a ``ManualClock``: windows, sizes, duplicates, outcomes, cancellation and
/// events.
@Suite("BatchedOrigin", .timeLimit(.minutes(1)))
struct BatchedOriginTests {
    static let window = Duration.milliseconds(5)

    @Test func aThousandLoadsOfAHundredKeysInOneWindowMakeOneCall() async throws {
        let clock = ManualClock()
        let calls = CallLog()
        // Room for every key, so that the window, not the size, ends the batch.
        let origin = BatchedOrigin<Int, String>(window: Self.window, maxBatchSize: 1_000, clock: clock) { keys in
            calls.record(keys)
            return values(of: keys)
        }
        let keys = (0..<1_000).map { $0 % 100 }
        let callers = keys.map { key in BatchCaller(of: origin, key: key) }
        await dispatchPending(of: origin, on: clock, callers: 1_000)
        for (key, caller) in zip(keys, callers) {
            #expect(try await caller.value == "v\(key)")
        }
        #expect(calls.all.count == 1)
        #expect(calls.all.first?.count == 100)
        #expect(Set(calls.all.first ?? []) == Set(0..<100))
    }

    @Test func aFullBatchGoesAtOnceAndTheRestWaitsForTheWindow() async throws {
        let clock = ManualClock()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, maxBatchSize: 30, clock: clock) { keys in
            calls.record(keys)
            return values(of: keys)
        }
        let callers = (0..<100).map { key in BatchCaller(of: origin, key: key) }
        await waitUntil { calls.all.count == 3 && origin.pendingKeyCount == 10 }
        await dispatchPending(of: origin, on: clock, callers: 10)
        for (key, caller) in callers.enumerated() {
            #expect(try await caller.value == "v\(key)")
        }
        #expect(calls.all.map(\.count) == [30, 30, 30, 10])
        let sent = calls.all.flatMap { $0 }
        #expect(sent.count == 100)
        #expect(Set(sent) == Set(0..<100))
    }

    @Test func eachKeyGetsItsOwnOutcome() async throws {
        let clock = ManualClock()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            var results = values(of: keys)
            results[2] = .failure(Boom(id: 2))
            results[3] = nil
            results[99] = .success("not asked for")
            return results
        }
        let callers = [1, 2, 3].map { key in BatchCaller(of: origin, key: key) }
        await dispatchPending(of: origin, on: clock, callers: 3)
        #expect(try await callers[0].value == "v1")
        await #expect(throws: Boom(id: 2)) { try await callers[1].value }
        await #expect(throws: BatchedOriginError.missingResult) { try await callers[2].value }
    }

    @Test func aThrowingBatchFunctionFailsEveryKeyOfTheBatch() async {
        let clock = ManualClock()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { _ in throw Boom(id: 0) }
        let callers = [1, 2, 2].map { key in BatchCaller(of: origin, key: key) }
        await dispatchPending(of: origin, on: clock, callers: 3)
        for caller in callers {
            await #expect(throws: Boom(id: 0)) { try await caller.value }
        }
    }

    @Test func keysWhoseCallersLeftBeforeDispatchAreNotSent() async throws {
        let clock = ManualClock()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            calls.record(keys)
            return values(of: keys)
        }
        let callers = (0..<5).map { key in BatchCaller(of: origin, key: key) }
        await waitUntil { origin.waitingCallerCount == 5 }
        callers[1].cancel()
        callers[3].cancel()
        await #expect(throws: CancellationError.self) { try await callers[1].value }
        await #expect(throws: CancellationError.self) { try await callers[3].value }
        #expect(origin.pendingKeyCount == 3)
        await dispatchPending(of: origin, on: clock, callers: 3)
        for key in [0, 2, 4] {
            #expect(try await callers[key].value == "v\(key)")
        }
        #expect(calls.all.map { Set($0) } == [[0, 2, 4]])
    }

    @Test func oneOfTwoCallersOfAKeyLeavingDoesNotDropTheKey() async throws {
        let clock = ManualClock()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            calls.record(keys)
            return values(of: keys)
        }
        let leaving = BatchCaller(of: origin, key: 7)
        let staying = BatchCaller(of: origin, key: 7)
        await waitUntil { origin.waitingCallerCount == 2 }
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.value }
        #expect(origin.pendingKeyCount == 1)
        await dispatchPending(of: origin, on: clock, callers: 1)
        #expect(try await staying.value == "v7")
        #expect(calls.all == [[7]])
    }

    @Test func aBatchWhoseCallersAllLeftBeforeDispatchIsNeverSent() async {
        let clock = ManualClock()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            calls.record(keys)
            return values(of: keys)
        }
        let callers = [1, 2].map { key in BatchCaller(of: origin, key: key) }
        await waitUntil { origin.waitingCallerCount == 2 }
        await clock.sleepers(atLeast: 1)
        for caller in callers { caller.cancel() }
        for caller in callers {
            await #expect(throws: CancellationError.self) { try await caller.value }
        }
        #expect(origin.pendingKeyCount == 0)
        #expect(clock.sleeperCount == 0, "the window of the discarded batch is cancelled")
        clock.advance(by: Self.window)
        // A new batch afterwards is sent alone: nothing of the discarded one is left in it.
        let next = BatchCaller(of: origin, key: 3)
        await dispatchPending(of: origin, on: clock, callers: 1)
        _ = try? await next.value
        #expect(calls.all == [[3]])
    }

    @Test func aCallerCancelledBeforeCallingAddsNothing() async {
        let clock = ManualClock()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: .zero, clock: clock) { keys in
            calls.record(keys)
            return values(of: keys)
        }
        let caller = BatchCaller(
            Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await origin.load(1)
            })
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(origin.pendingKeyCount == 0)
        #expect(origin.waitingCallerCount == 0)
        #expect(calls.all.isEmpty)
    }

    @Test func whenEveryCallerLeavesARunningBatchItsFetchIsCancelled() async {
        let clock = ManualClock()
        let probe = Probe()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            calls.record(keys)
            return try await probe.runUntilCancelled(returning: [:])
        }
        let callers = [1, 2, 2].map { key in BatchCaller(of: origin, key: key) }
        await dispatchPending(of: origin, on: clock, callers: 3)
        await waitUntil { calls.all.count == 1 }
        // A cancelled caller leaves on its own task, before it returns.
        for caller in callers[0...1] {
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }
        }
        #expect(origin.runningBatchCount == 1, "key 2 still has a caller")
        #expect(!probe.sawCancellationSoFar)
        callers[2].cancel()
        await #expect(throws: CancellationError.self) { try await callers[2].value }
        #expect(origin.runningBatchCount == 0)
        await waitUntil { probe.sawCancellationSoFar }
        #expect(probe.sawCancellationSoFar)
    }

    @Test func aBatchFunctionIgnoringCancellationHoldsNoCancelledCaller() async throws {
        let clock = ManualClock()
        let gate = Gate()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            calls.record(keys)
            await gate.wait()
            return values(of: keys)
        }
        let leaving = BatchCaller(of: origin, key: 1)
        let staying = BatchCaller(of: origin, key: 2)
        await dispatchPending(of: origin, on: clock, callers: 2)
        await waitUntil { calls.all.count == 1 }
        leaving.cancel()
        // Returns while the batch function still waits at the closed gate.
        await #expect(throws: CancellationError.self) { try await leaving.value }
        #expect(origin.runningBatchCount == 1)
        gate.open()
        #expect(try await staying.value == "v2")
        #expect(origin.runningBatchCount == 0)
    }

    @Test func aBatchFunctionIgnoringCancellationHoldsNoneOfItsCancelledCallers() async {
        let clock = ManualClock()
        let gate = Gate()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            calls.record(keys)
            await gate.wait()
            return values(of: keys)
        }
        let callers = [1, 2].map { key in BatchCaller(of: origin, key: key) }
        await dispatchPending(of: origin, on: clock, callers: 2)
        await waitUntil { calls.all.count == 1 }
        for caller in callers { caller.cancel() }
        for caller in callers {
            await #expect(throws: CancellationError.self) { try await caller.value }
        }
        #expect(origin.runningBatchCount == 0)
        gate.open()
    }

    /// A batch already sent may have read the origin before a new caller came (before a write that
    /// caller follows): the new caller of its key goes to a batch of its own, sent after it arrived.
    @Test func aKeyLoadedWhileItsBatchRunsGoesToANewBatch() async throws {
        let clock = ManualClock()
        let calls = CallLog()
        let gate = Gate()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            calls.record(keys)
            if calls.all.count == 1 { await gate.wait() }
            return values(of: keys)
        }
        let first = BatchCaller(of: origin, key: 1)
        await dispatchPending(of: origin, on: clock, callers: 1)
        await waitUntil { calls.all.count == 1 }
        let second = BatchCaller(of: origin, key: 1)
        await waitUntil { origin.waitingCallerCount == 2 }
        #expect(origin.pendingKeyCount == 1, "not joined to the batch already sent")
        #expect(origin.runningBatchCount == 1)
        await dispatchPending(of: origin, on: clock, callers: 2)
        #expect(try await second.value == "v1", "answered by its own batch while the first still waits")
        gate.open()
        #expect(try await first.value == "v1")
        #expect(calls.all == [[1], [1]])
    }

    @Test func nothingIsRememberedAfterABatchEnds() async throws {
        let clock = ManualClock()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
            calls.record(keys)
            if calls.all.count == 1 { throw Boom(id: 1) }
            return values(of: keys)
        }
        let failing = BatchCaller(of: origin, key: 1)
        await dispatchPending(of: origin, on: clock, callers: 1)
        await #expect(throws: Boom(id: 1)) { try await failing.value }
        for _ in 0..<2 {
            let again = BatchCaller(of: origin, key: 1)
            await dispatchPending(of: origin, on: clock, callers: 1)
            #expect(try await again.value == "v1")
        }
        #expect(calls.all == [[1], [1], [1]])
    }

    @Test func theObserverHearsOfEveryDispatchWithItsSize() async throws {
        let clock = ManualClock()
        let events = EventLog()
        let calls = CallLog()
        let origin = BatchedOrigin<Int, String>(
            window: Self.window, maxBatchSize: 3, clock: clock, observer: events
        ) { keys in
            calls.record(keys)
            return values(of: keys)
        }
        let callers = (0..<5).map { key in BatchCaller(of: origin, key: key) }
        await waitUntil { calls.all.count == 1 && origin.pendingKeyCount == 2 }
        await dispatchPending(of: origin, on: clock, callers: 2)
        for caller in callers { _ = try await caller.value }
        let dispatched = events.all.map { event -> Int? in
            guard case .batchDispatched(let size) = event.kind else { return nil }
            return size
        }
        #expect(dispatched == [3, 2])
        #expect(events.all.allSatisfy { $0.key == nil && $0.dataType == String.self })
    }

    @Test func outOfRangeSettingsAreClamped() async throws {
        let clock = ManualClock()
        let calls = CallLog()
        // No window: each key is sent alone, at once, with no clock moved.
        let single = BatchedOrigin<Int, String>(window: .seconds(60), maxBatchSize: -3, clock: clock) { keys in
            calls.record(keys)
            return values(of: keys)
        }
        #expect(try await single.load(1) == "v1")
        #expect(try await single.load(2) == "v2")
        #expect(calls.all == [[1], [2]])
        // A negative window is no window: sent with no clock moved.
        let immediate = BatchedOrigin<Int, String>(window: .seconds(-1), clock: clock) { keys in values(of: keys) }
        #expect(try await immediate.load(3) == "v3")
    }

    /// The defaults (a 5 ms window on the continuous clock) need no argument; nothing here loads, so
    /// nothing sleeps on the real clock.
    @Test func theDefaultsNeedOnlyTheBatchFunction() {
        let origin = BatchedOrigin<Int, String> { keys in values(of: keys) }
        #expect(origin.pendingKeyCount == 0)
        #expect(origin.runningBatchCount == 0)
    }

    @Test func instancesShareNothing() async throws {
        let clock = ManualClock()
        let calls = CallLog()
        let origins = (0..<2).map { _ in
            BatchedOrigin<Int, String>(window: Self.window, clock: clock) { keys in
                calls.record(keys)
                return values(of: keys)
            }
        }
        let callers = origins.map { origin in BatchCaller(of: origin, key: 1) }
        await waitUntil { origins.allSatisfy { $0.waitingCallerCount == 1 } }
        await clock.sleepers(atLeast: 2)
        clock.advance(by: Self.window)
        for caller in callers { #expect(try await caller.value == "v1") }
        #expect(calls.all == [[1], [1]])
    }
}

/// Callers cancelled at random moments (before calling, while their batch is pending, as its window ends,
/// while its origin call runs), over batch functions that do and do not stop when cancelled: every
/// caller not cancelled gets its value, and nothing is left behind.
@Suite("BatchedOrigin: stress", .timeLimit(.minutes(1)))
struct BatchedOriginStressTests {
    /// When a caller is cancelled.
    enum Moment: CaseIterable {
        case never, beforeCalling, whilePending, atDispatch, whileRunning
    }

    @Test(arguments: 0..<4)
    func callersCancelledAtRandomMomentsLeaveNothingBehind(part: Int) async {
        for round in 0..<100 where !Task.isCancelled {
            await runRound(seed: UInt64(part * 100 + round))
        }
    }

    private func runRound(seed: UInt64) async {
        var random = SplitMix64(seed: seed)
        let clock = ManualClock()
        // The origin answers at once, or when the test says so: at a gate (ignoring cancellation), or at
        // the end of a sleep on a clock of its own (ending at once when cancelled).
        let answers = Int.random(in: 0..<3, using: &random)
        let gate = Gate()
        let answer = ManualClock()
        let calls = CallLog()
        let maxBatchSize = Int.random(in: 1...6, using: &random)
        let origin = BatchedOrigin<Int, String>(
            window: BatchedOriginTests.window, maxBatchSize: maxBatchSize, clock: clock
        ) { keys in
            calls.record(keys)
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
        let finished = LockedValue(0)
        let callers = plan.map { caller in
            let task = BatchCaller(
                Task {
                    defer { finished.withLock { $0 += 1 } }
                    return try await origin.load(caller.key)
                })
            if caller.moment == .beforeCalling { task.cancel() }
            return task
        }
        func cancel(at moment: Moment) {
            for (caller, task) in zip(plan, callers) where caller.moment == moment { task.cancel() }
        }
        // Every caller has joined a batch or ended (the count ended is read first, so none counts twice).
        await waitUntil {
            let ended = finished.withLock { $0 }
            return ended + origin.waitingCallerCount >= plan.count
        }
        cancel(at: .whilePending)
        let window = Task { clock.advance(by: BatchedOriginTests.window) }
        cancel(at: .atDispatch)
        await window.value
        // The window timer may have started sleeping after the clock moved: move it until it fires.
        while origin.pendingKeyCount > 0 {
            clock.advance(by: BatchedOriginTests.window)
            await Task.yield()
        }
        // Some batches may have ended already (an origin answering at once); the others answer while the
        // last callers are being cancelled.
        let release = Task {
            gate.open()
            answer.advance(by: .seconds(1))
        }
        cancel(at: .whileRunning)
        await release.value

        var failures: [String] = []
        for (caller, task) in zip(plan, callers) {
            switch await task.result {
            case .success(let value) where value == "v\(caller.key)":
                break
            case .failure(is CancellationError) where caller.moment != .never:
                break
            case let outcome:
                failures.append("caller of \(caller.key) cancelled \(caller.moment): \(outcome)")
            }
        }
        let context = Comment(rawValue: "seed \(seed), maxBatchSize \(maxBatchSize), answers \(answers)")
        #expect(failures.isEmpty, "\(context): \(failures)")
        #expect(origin.pendingKeyCount == 0, context)
        #expect(origin.runningBatchCount == 0, context)
        #expect(origin.waitingCallerCount == 0, context)
        for keys in calls.all {
            #expect(!keys.isEmpty && keys.count <= maxBatchSize && Set(keys).count == keys.count, context)
        }
    }
}

// MARK: - Helpers

/// An error the batch function returns or throws.
private struct Boom: Error, Equatable {
    let id: Int
}

/// Every key's value: `"v"` and the key (a key sent twice, which the tests check against, is no crash).
private func values(of keys: [Int]) -> [Int: Result<String, any Error>] {
    Dictionary(keys.map { ($0, .success("v\($0)")) }, uniquingKeysWith: { first, _ in first })
}

/// The keys of every call of a batch function, in call order.
private final class CallLog: Sendable {
    private let calls = LockedValue<[[Int]]>([])

    func record(_ keys: [Int]) {
        calls.withLock { $0.append(keys) }
    }

    var all: [[Int]] { calls.withLock { $0 } }
}

/// The events an observer received, in order.
private final class EventLog: StoreEventObserver {
    private let events = LockedValue<[StoreEvent]>([])

    func observe(_ event: StoreEvent) {
        events.withLock { $0.append(event) }
    }

    var all: [StoreEvent] { events.withLock { $0 } }
}

/// Returns once `condition` holds, yielding in between (never sleeping).
/// Returns once `condition` holds, yielding in between (never sleeping); returns early when the test
/// is cancelled (at its time limit), so that a condition never met fails the test instead of hanging it.
private func waitUntil(_ condition: () -> Bool) async {
    while !condition() && !Task.isCancelled { await Task.yield() }
}

/// Waits until `callers` callers wait in `origin` and its window timer sleeps, then ends the window.
private func dispatchPending(of origin: BatchedOrigin<Int, String>, on clock: ManualClock, callers: Int) async {
    await waitUntil { origin.waitingCallerCount >= callers }
    await clock.sleepers(atLeast: 1)
    clock.advance(by: BatchedOriginTests.window)
}
