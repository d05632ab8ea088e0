import StoreFlowable
import StoreFlowableTesting
import Testing

/// An error with a readable description, private to this file.
private struct RecorderFailure: Error, CustomStringConvertible {
    var description: String { "offline" }
}

/// A clock whose sleeps end at once, so that a timeout of any length passes immediately.
private struct ImmediateClock: Clock {
    typealias Instant = ContinuousClock.Instant
    var now: Instant { .now }
    var minimumResolution: Duration { .zero }
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
    }
}

@Suite struct StateRecorderTests {
    @Test(.timeLimit(.minutes(1)))
    func recordsEveryStateInOrder() async throws {
        let (stream, input) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let recorder = StateRecorder(stream)
        input.yield(.loading(content: nil))
        input.yield(.completed(1))
        input.yield(.error(content: 1, rawError: RecorderFailure()))
        let states = try await recorder.waitUntil { $0.count == 3 }
        #expect(states.count == 3)
        #expect(recorder.snapshots == [.loading(nil), .completed(1), .error(1, "offline")])
        #expect(recorder.latest?.snapshot == .error(1, "offline"))
    }

    @Test(.timeLimit(.minutes(1)))
    func waitReturnsAtOnceWhenThePredicateAlreadyHolds() async throws {
        let (stream, input) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let recorder = StateRecorder(stream)
        input.yield(.completed(1))
        try await recorder.waitUntil { !$0.isEmpty }
        let states = try await recorder.waitUntil { !$0.isEmpty }
        #expect(states.map(\.snapshot) == [.completed(1)])
        #expect(recorder.pendingWaitCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func waitForLatestReturnsTheMatchingState() async throws {
        let (stream, input) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let recorder = StateRecorder(stream)
        let waiter = Task {
            try await recorder.waitForLatest {
                if case .completed(let value, _, _) = $0 { return value >= 2 }
                return false
            }
        }
        for value in 0..<4 { input.yield(.completed(value)) }
        let latest = try await waiter.value
        #expect(latest.snapshot == .completed(2) || latest.snapshot == .completed(3))
        #expect(recorder.snapshots.prefix(3) == [.completed(0), .completed(1), .completed(2)])
    }

    @Test(.timeLimit(.minutes(1)))
    func manyConcurrentWaitersAllWake() async throws {
        let (stream, input) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let recorder = StateRecorder(stream)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for needed in 1...100 {
                group.addTask { try await recorder.waitUntil { $0.count >= needed % 20 + 1 }.count }
            }
            for value in 0..<20 { input.yield(.completed(value)) }
            for try await seen in group {
                #expect(seen >= 1)
            }
        }
        #expect(recorder.pendingWaitCount == 0)
        #expect(recorder.states.count == 20)
    }

    @Test(.timeLimit(.minutes(1)))
    func waitTimesOutWithTheStatesSeen() async throws {
        let (stream, input) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let recorder = StateRecorder(stream)
        input.yield(.loading(content: nil))
        try await recorder.waitUntil { !$0.isEmpty }
        do {
            try await recorder.waitUntil(timeout: .milliseconds(50)) { _ in false }
            Issue.record("waitUntil returned although its predicate never holds")
        } catch let error as StateRecorderError {
            #expect(error.isTimeout)
            #expect(error.reason == .timedOut(after: .milliseconds(50)))
            #expect(error.states == [".loading(nil)"])
            #expect(error.description.contains(".loading(nil)"))
        }
        #expect(recorder.pendingWaitCount == 0, "a timed-out wait must withdraw its waiter")
    }

    @Test(.timeLimit(.minutes(1)))
    func timeoutIsMeasuredOnTheInjectedClock() async throws {
        let (stream, _) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let recorder = StateRecorder(stream, clock: ImmediateClock())
        await #expect(throws: StateRecorderError.self) {
            try await recorder.waitForLatest(timeout: .seconds(3600)) { _ in true }
        }
        #expect(recorder.pendingWaitCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func cancelledWaitThrowsAndWithdrawsItsWaiter() async throws {
        let (stream, _) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let recorder = StateRecorder(stream)
        let (checked, signal) = AsyncStream.makeStream(of: Void.self)
        let waiter = Task {
            try await recorder.waitUntil { _ in
                signal.yield()
                return false
            }
        }
        for await _ in checked { break }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(recorder.pendingWaitCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func predicateMayReadTheRecorder() async throws {
        let (stream, input) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let recorder = StateRecorder(stream)
        let waiter = Task { try await recorder.waitUntil { _ in recorder.latest != nil && recorder.states.count >= 2 } }
        input.yield(.loading(content: nil))
        input.yield(.completed(1))
        #expect(try await waiter.value.count >= 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func cancelEndsTheStreamAndFinishedReturns() async throws {
        let (stream, input) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let (terminations, terminated) = AsyncStream.makeStream(of: Void.self)
        input.onTermination = { _ in
            terminated.yield()
            terminated.finish()
        }
        let recorder = StateRecorder(stream)
        input.yield(.completed(1))
        try await recorder.waitUntil { !$0.isEmpty }
        recorder.cancel()
        await recorder.finished()
        var count = 0
        for await _ in terminations { count += 1 }
        #expect(count == 1)
        #expect(recorder.snapshots == [.completed(1)], "states stay readable after cancel")
        await #expect(throws: StateRecorderError.self) { try await recorder.waitUntil { $0.count > 1 } }
    }

    @Test(.timeLimit(.minutes(1)))
    func waitersFailWhenTheStreamFinishes() async throws {
        let (stream, input) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let recorder = StateRecorder(stream)
        let waiter = Task { try await recorder.waitUntil { $0.count > 1 } }
        input.yield(.completed(1))
        input.finish()
        await recorder.finished()
        do {
            _ = try await waiter.value
            Issue.record("waitUntil returned although only one state ever came")
        } catch let error as StateRecorderError {
            #expect(error.reason == .streamFinished)
            #expect(error.states == [".completed(1)"])
        }
        #expect(try await recorder.waitUntil { $0.count == 1 }.count == 1, "a satisfied wait still returns")
    }

    @Test(.timeLimit(.minutes(1)))
    func statesAreReadableWhileRecording() async throws {
        let (stream, input) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let recorder = StateRecorder(stream)
        let total = 1_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var seen = 0
                while seen < total {
                    let count = recorder.states.count
                    #expect(count >= seen)
                    seen = count
                    if count < total { try await recorder.waitUntil { $0.count > count } }
                }
            }
            for value in 0..<total { input.yield(.completed(value)) }
            try await group.waitForAll()
        }
        #expect(recorder.states.count == total)
    }
}
