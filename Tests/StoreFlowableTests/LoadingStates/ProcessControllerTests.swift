import StoreFlowableTesting
import Testing

@testable import StoreFlowable

private let down = TestError("down")

/// `ProcessController` end to end: the same rule and paths as a loadable, with process kinds.
@Suite("ProcessController", .timeLimit(.minutes(1)))
struct ProcessControllerTests {
    private enum Action: Equatable, Sendable {
        case save
        case delete
    }

    @Test func aProcessShowsRunningThenFinished() async {
        let actions = ProcessController<Action>()
        let gate = Gate()
        let task = actions.run(.save) { await gate.wait() }
        #expect(actions.state.isRunning(.save))
        #expect(!actions.state.isRunning(.delete))
        gate.open()
        await task.value
        #expect(actions.state.hasFinished(.save))
    }

    @Test func aFailedProcessShowsItsKindAndError() async {
        let actions = ProcessController<Action>()
        await actions.runAndWait(.delete) { throw down }
        #expect(actions.state.hasFailed(.delete))
        #expect(actions.state.error as? TestError == down)
    }

    @Test func aNewProcessSupersedesTheRunningOneWhichNeverWritesItsEnd() async {
        let actions = ProcessController<Action>()
        let save = Probe()
        let saving = actions.run(.save) { try await save.runUntilCancelled(throwing: down) }
        await save.started()
        await actions.runAndWait(.delete) {}
        await saving.value
        #expect(await save.wasCancelled())
        #expect(actions.state == .finished(.delete))
    }

    @Test func cancelRestoresTheStateBeforeTheProcessAndResetShowsIdle() async {
        let actions = ProcessController<Action>(.finished(.save))
        let work = Probe()
        let task = actions.run(.delete) { try await work.runUntilCancelled(returning: ()) }
        await work.started()
        actions.cancel()
        await task.value
        #expect(await work.wasCancelled())
        #expect(actions.state == .finished(.save))
        actions.reset()
        #expect(actions.state == .idle)
    }

    @Test func throwingCancelProcessOrResetProcessFromInside() async {
        let actions = ProcessController<Action>(.finished(.save))
        await actions.runAndWait(.delete) { throw CancelProcess() }
        #expect(actions.state == .finished(.save))
        await actions.runAndWait(.delete) { throw ResetProcess() }
        #expect(actions.state == .idle)
    }

    @Test func aTimedOutProcessFailsWithTimeoutError() async {
        let clock = ManualClock()
        let actions = ProcessController<Action>(clock: clock)
        let work = Probe()
        let task = actions.run(.save, timeout: .seconds(30)) { try await work.runUntilCancelled(returning: ()) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(30))
        await task.value
        #expect(await work.wasCancelled())
        #expect(actions.state.hasFailed(.save))
        #expect(actions.state.error as? TimeoutError == TimeoutError(after: .seconds(30)))
    }

    @Test func aSingleProcessReadsWithoutAKind() async {
        let saving = ProcessController<SingleProcess>()
        await saving.runAndWait {}
        #expect(saving.state == .finished)
        await saving.run { throw down }.value
        #expect(saving.state == .failed(down))
    }

    @Test func theCallersCancellationEndsAnAwaitedProcessWithoutItsEnd() async {
        let actions = ProcessController<Action>()
        let work = Probe()
        let caller = Task { await actions.runAndWait(.save) { try await work.runUntilCancelled(throwing: down) } }
        await work.started()
        caller.cancel()
        await caller.value
        #expect(actions.state == .idle)
    }

    @Test func theCallersCancellationEndsAnAwaitedProcessWhoseWorkRunsOn() async {
        let actions = ProcessController<Action>()
        let gate = Gate()
        let caller = Task { await actions.runAndWait(.save) { await gate.wait() } }
        await gate.arrived()
        caller.cancel()
        for _ in 0..<50 { await Task.yield() }
        gate.open()
        await caller.value
        #expect(actions.state == .idle)
    }
}
