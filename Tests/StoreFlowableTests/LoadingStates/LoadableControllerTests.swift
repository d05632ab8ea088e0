import Observation
import StoreFlowableTesting
import Testing

@testable import StoreFlowable

private let down = TestError("down")

/// `LoadableController` end to end: every path of a load, with a manual clock and no waiting on time.
@Suite("LoadableController", .timeLimit(.minutes(1)))
struct LoadableControllerTests {
    // MARK: Outcomes

    @Test func aLoadShowsLoadingThenTheValue() async {
        let controller = LoadableController<String>()
        let gate = Gate()
        let task = controller.load {
            await gate.wait(); return "v1"
        }
        #expect(controller.state == .loading)
        gate.open()
        await task.value
        #expect(controller.state == .loaded("v1"))
    }

    @Test func aFailedLoadShowsItsError() async {
        let controller = LoadableController<String>()
        await controller.load { throw down }.value
        #expect(controller.state == .error(down))
    }

    @Test func aSilentLoadKeepsTheStateUntilItEnds() async {
        let controller = LoadableController<String>(.loaded("old"))
        let gate = Gate()
        let task = controller.load(silently: true) {
            await gate.wait(); return "new"
        }
        #expect(controller.state == .loaded("old"))
        gate.open()
        await task.value
        #expect(controller.state == .loaded("new"))
    }

    // MARK: Cancel and reset

    @Test func cancellingFromOutsideStopsTheWorkAndRestoresTheStateBeforeTheLoad() async {
        let controller = LoadableController<String>(.loaded("old"))
        let work = Probe()
        let task = controller.load { try await work.runUntilCancelled(returning: "late") }
        await work.started()
        controller.cancel()
        #expect(controller.state == .loaded("old"))
        await task.value
        #expect(await work.wasCancelled())
        // The work returned a value after its cancellation: it was not shown.
        #expect(controller.state == .loaded("old"))
    }

    @Test func throwingCancelLoadableEndsTheLoadAsCancelDoes() async {
        let controller = LoadableController<String>(.loaded("old"))
        await controller.load { throw CancelLoadable() }.value
        #expect(controller.state == .loaded("old"))
    }

    @Test func resettingFromOutsideShowsAbsentAndStopsTheWork() async {
        let controller = LoadableController<String>(.loaded("old"))
        let work = Probe()
        let task = controller.load(silently: true) { try await work.runUntilCancelled(returning: "late") }
        await work.started()
        controller.reset()
        #expect(controller.state == .absent)
        await task.value
        #expect(await work.wasCancelled())
        #expect(controller.state == .absent)
    }

    @Test func throwingResetLoadableShowsAbsent() async {
        let controller = LoadableController<String>(.loaded("old"))
        await controller.load { throw ResetLoadable() }.value
        #expect(controller.state == .absent)
    }

    @Test func cancelAndResetWithNoLoadRunning() {
        let controller = LoadableController<String>(.loaded("old"))
        controller.cancel()
        #expect(controller.state == .loaded("old"))
        controller.reset()
        #expect(controller.state == .absent)
    }

    // MARK: The only-the-current-load-writes rule (each seed bug by the behaviour it broke)

    @Test func aSupersededLoadNeverWritesItsValue() async {
        let controller = LoadableController<String>()
        let first = Probe()
        let firstTask = controller.load { try await first.runUntilCancelled(returning: "first") }
        await first.started()
        let secondTask = controller.load { "second" }
        await secondTask.value
        await firstTask.value
        #expect(await first.wasCancelled())
        #expect(controller.state == .loaded("second"))
    }

    @Test func aSupersededLoadNeverWritesItsError() async {
        let controller = LoadableController<String>()
        let first = Probe()
        let firstTask = controller.load { try await first.runUntilCancelled(throwing: down) }
        await first.started()
        let second = Gate()
        let secondTask = controller.load {
            await second.wait(); return "second"
        }
        await firstTask.value
        // The first load ended with an error after it was superseded: the second one's loading stays.
        #expect(controller.state == .loading)
        second.open()
        await secondTask.value
        #expect(controller.state == .loaded("second"))
    }

    /// The seed's async variant did not cancel the previous load.
    @Test func anAwaitedLoadSupersedesTheRunningOne() async {
        let controller = LoadableController<String>()
        let first = Probe()
        let firstTask = controller.load { try await first.runUntilCancelled(returning: "first") }
        await first.started()
        await controller.loadAndWait { "second" }
        await firstTask.value
        #expect(await first.wasCancelled())
        #expect(controller.state == .loaded("second"))
    }

    /// A cancelled URL request throws its own error, not `CancellationError`; the seed showed it.
    @Test func aCancelledLoadEndingWithAnotherErrorShowsNothing() async {
        let controller = LoadableController<String>(.loaded("old"))
        let work = Probe()
        let task = controller.load { try await work.runUntilCancelled(throwing: TestError("request cancelled")) }
        await work.started()
        controller.cancel()
        await task.value
        #expect(controller.state == .loaded("old"))
    }

    @Test func cancellingTheCallersTaskCancelsAnAwaitedLoad() async {
        let controller = LoadableController<String>(.loaded("old"))
        let work = Probe()
        let caller = Task { await controller.loadAndWait { try await work.runUntilCancelled(returning: "late") } }
        await work.started()
        #expect(controller.state == .loading)
        caller.cancel()
        await caller.value
        #expect(await work.wasCancelled())
        #expect(controller.state == .loaded("old"))
    }

    /// Work that ignores its cancellation: the stop signal ends before the work does, and the load
    /// must still count as cancelled (it stayed `.loading` when the stop signal ended first).
    @Test func cancellingTheCallersTaskCancelsAnAwaitedLoadWhoseWorkRunsOn() async {
        let controller = LoadableController<String>(.loaded("old"))
        let gate = Gate()
        let caller = await awaitedLoad(of: controller, heldAt: gate)
        caller.cancel()
        for _ in 0..<50 { await Task.yield() }
        gate.open()
        await caller.value
        #expect(controller.state == .loaded("old"))
    }

    @Test func anAwaitedLoadsWorkHasTheCallersTaskLocalValues() async {
        enum Local {
            @TaskLocal static var name = "none"
        }
        let controller = LoadableController<String>()
        await Local.$name.withValue("caller") {
            await controller.loadAndWait { Local.name }
        }
        #expect(controller.state == .loaded("caller"))
    }

    // MARK: Streaming

    @Test func aStreamingLoadShowsEachYieldedStateAndKeepsTheLast() async {
        let controller = LoadableController<[Int]>()
        let step = Gate()
        let task = controller.loadStreaming { yield in
            yield(.loaded([1]))
            await step.wait()
            yield(.loaded([1, 2]))
        }
        await step.arrived()
        #expect(controller.state == .loaded([1]))
        step.open()
        await task.value
        #expect(controller.state == .loaded([1, 2]))
    }

    /// A stream starts with the current state and, however slow its consumer, ends on the latest.
    @Test func aStreamOfStatesStartsWithTheCurrentOneAndEndsOnTheLatest() async {
        let controller = LoadableController<Int>(.loaded(0))
        let states = controller.states()
        var iterator = states.makeAsyncIterator()
        #expect(await iterator.next() == .loaded(0))
        for value in 1...100 {
            await controller.loadAndWait { value }
        }
        var last: LoadableState<Int>?
        while let state = await iterator.next() {
            last = state
            if state == .loaded(100) { break }
        }
        #expect(last == .loaded(100))
    }

    @Test func aStreamSupersededMidWayYieldsNothingMore() async {
        let controller = LoadableController<String>()
        let first = Gate()
        let yieldedAfterSupersede = LockedValue<Bool?>(nil)
        let firstTask = controller.loadStreaming { yield in
            yield(.loaded("first partial"))
            await first.wait()
            yieldedAfterSupersede.withLock { $0 = yield(.loaded("first late")) }
        }
        await first.arrived()
        await controller.loadAndWait { "second" }
        first.open()
        await firstTask.value
        // The superseded work runs on in its own task; its late yield is refused.
        await eventually { yieldedAfterSupersede.withLock { $0 } != nil }
        #expect(yieldedAfterSupersede.withLock { $0 } == false)
        #expect(controller.state == .loaded("second"))
    }

    @Test func aStreamThatReturnsWhileLoadingGoesBackToTheStateBeforeIt() async {
        let controller = LoadableController<String>(.loaded("old"))
        await controller.loadStreamingAndWait { yield in yield(.loading) }
        #expect(controller.state == .loaded("old"))
    }

    @Test func aStreamThatThrowsShowsTheError() async {
        let controller = LoadableController<String>()
        await controller.loadStreamingAndWait { yield in
            yield(.loaded("partial"))
            throw down
        }
        #expect(controller.state == .error(down))
    }

    // MARK: Interrupts and timeouts

    @Test func interruptsFireInOrderWithTheTimeSinceTheStart() async {
        let clock = ManualClock()
        let controller = LoadableController<String>(clock: clock)
        let fired = LockedValue<[Duration]>([])
        let gate = Gate()
        let task = controller.load(
            interrupts: [.seconds(1), .seconds(2)],
            onInterrupt: { delay in
                fired.withLock { $0.append(delay) }
            }
        ) {
            await gate.wait()
            return "done"
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await clock.sleepers(atLeast: 1)
        #expect(fired.withLock { $0 } == [.seconds(1)])
        clock.advance(by: .seconds(2))
        await eventually { fired.withLock { $0 } == [.seconds(1), .seconds(3)] }
        #expect(controller.state == .loading)
        gate.open()
        await task.value
        #expect(controller.state == .loaded("done"))
    }

    @Test func aTimeoutEndsTheLoadWithTimeoutErrorAndCancelsTheWork() async {
        let clock = ManualClock()
        let controller = LoadableController<String>(clock: clock)
        let work = Probe()
        let task = controller.load(timeout: .seconds(5)) { try await work.runUntilCancelled(returning: "late") }
        await work.started()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(4))
        #expect(controller.state == .loading)
        clock.advance(by: .seconds(1))
        await task.value
        #expect(await work.wasCancelled())
        #expect(controller.state == .error(TimeoutError(after: .seconds(5))))
    }

    @Test func anInterruptThatThrowsEndsTheLoadWithItsError() async {
        let clock = ManualClock()
        let controller = LoadableController<String>(clock: clock)
        let work = Probe()
        let task = controller.load(interrupts: [.seconds(2)], onInterrupt: { _ in throw down }) {
            try await work.runUntilCancelled(returning: "late")
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        await task.value
        #expect(await work.wasCancelled())
        #expect(controller.state == .error(down))
    }

    @Test func aLoadThatEndsFirstStopsItsInterrupts() async {
        let clock = ManualClock()
        let controller = LoadableController<String>(clock: clock)
        await controller.load(interrupts: [.seconds(1)], timeout: .seconds(2)) { "quick" }.value
        #expect(clock.sleeperCount == 0)
        clock.advance(by: .seconds(5))
        #expect(controller.state == .loaded("quick"))
    }

    // MARK: Observation

    @Test func observationSeesEachTransition() async {
        let controller = LoadableController<String>()
        let gate = Gate()
        var flag = ChangeFlag { _ = controller.state }
        let task = controller.load {
            await gate.wait(); return "v1"
        }
        #expect(flag.fired)
        flag = ChangeFlag { _ = controller.state }
        gate.open()
        await task.value
        #expect(flag.fired)
        flag = ChangeFlag { _ = controller.state }
        controller.reset()
        #expect(flag.fired)
        flag = ChangeFlag { _ = controller.state }
        controller.cancel()  // nothing runs: no change
        #expect(!flag.fired)
    }

    @Test func aReleasedControllerFinishesItsStreamsAndCancelsItsLoad() async {
        var controller: LoadableController<String>? = LoadableController<String>()
        let work = Probe()
        let states = controller?.states()
        let task = controller?.load { try await work.runUntilCancelled(returning: "late") }
        await work.started()
        controller = nil
        await task?.value
        #expect(await work.wasCancelled())
        var seen = 0
        if let states {
            for await _ in states { seen += 1 }
        }
        #expect(seen >= 1)
    }
}

/// Whether what `read` reads changed since the flag was made (one `withObservationTracking`
/// registration).
private final class ChangeFlag: Sendable {
    private let state = LockedValue(false)
    var fired: Bool { state.withLock { $0 } }

    init(_ read: () -> Void) {
        withObservationTracking {
            read()
        } onChange: { [state] in
            state.withLock { $0 = true }
        }
    }
}
