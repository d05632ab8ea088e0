import Dispatch
import Observation
import Testing

@testable import StoreFlowable

@MainActor
@Observable
private final class Issue12ReviewModel: LoadableSupport, ProcessSupport {
    var number: LoadableState<Int> = .absent
    var action: ProcessState<String> = .idle
    @ObservationIgnored let loadingSlots = LoadingSlots()
}

/// Blocks the calling thread (the main actor's), for 30 s at most, until `runner` shows a state that
/// `isEnd` accepts, so that the property mirroring task (a main-actor job) cannot run in between: the
/// situation of a main actor busy with other work when a load ends off it.
private func blockUntil<State: WorkState & Sendable>(
    _ runner: WorkRunner<State>, _ isEnd: @escaping @Sendable (State) -> Bool
) {
    let ended = DispatchSemaphore(value: 0)
    let states = runner.states()
    Task.detached {
        for await state in states where isEnd(state) {
            ended.signal()
            return
        }
    }
    // Bounded: the main thread blocked here is not one the suite's time limit can free.
    if ended.wait(timeout: .now() + .seconds(30)) == .timedOut {
        Issue.record("the runner did not reach the expected state within 30 s")
    }
}

/// A load that ended off the main actor while the main actor was busy has its end in the runner but
/// not yet in the property. A new load started then (`begin`: no load runs, so `adoptPropertyValue`)
/// takes the property's stale `.loading` as "what the owner set itself", overwriting the ended load's
/// value in the runner; the new load's `stateBefore` is then `.loading`, so cancelling it leaves the
/// property `.loading` for good with no load running, and the value of the ended load is lost.
@MainActor
@Suite("Issue12Review: PropertySlot adopts a stale property value", .timeLimit(.minutes(1)))
struct Issue12ReviewPropertySlotTests {
    @Test func cancellingALoadStartedRightAfterAnotherEndedGoesBackToThatEnd() async {
        let model = Issue12ReviewModel()
        let gate = Gate()
        let first = model.load(\.number) {
            await gate.wait()
            return 5
        }
        await gate.arrived()
        let runner = model.loadingSlots.slot(for: \Issue12ReviewModel.number, of: model).runner
        gate.open()
        blockUntil(runner) { $0 == .loaded(5) }
        // The first load has ended with 5; the mirroring job has not run yet.
        let work = Probe()
        let second = model.load(\.number) { try await work.runUntilCancelled(returning: 7) }
        model.cancel(\.number)
        await first.value
        await second.value
        for _ in 0..<50 { await Task.yield() }
        #expect(runner.snapshot.state.isInProgress == false)
        // Back to the first load's end (it was `.loading`, with no load running).
        #expect(model.number == .loaded(5))
        #expect(runner.state == .loaded(5))
    }

    @Test func aSilentLoadCancelledRightAfterAnotherEndedLeavesNoLoadingBehind() async {
        let model = Issue12ReviewModel()
        let gate = Gate()
        let first = model.load(\.number) {
            await gate.wait()
            return 5
        }
        await gate.arrived()
        let runner = model.loadingSlots.slot(for: \Issue12ReviewModel.number, of: model).runner
        gate.open()
        blockUntil(runner) { $0 == .loaded(5) }
        // A silent refresh that cancels itself: the state should stay what it was, `.loaded(5)`.
        await model.loadAndWait(\.number, silently: true) { throw CancelLoadable() }
        await first.value
        for _ in 0..<50 { await Task.yield() }
        #expect(model.number == .loaded(5))
    }

    @Test func cancellingAProcessStartedRightAfterAnotherEndedGoesBackToThatEnd() async {
        let model = Issue12ReviewModel()
        let gate = Gate()
        let first = model.run(\.action, as: "save") { await gate.wait() }
        await gate.arrived()
        let runner = model.loadingSlots.slot(for: \Issue12ReviewModel.action, of: model).runner
        gate.open()
        blockUntil(runner) { $0 == .finished("save") }
        let work = Probe()
        let second = model.run(\.action, as: "delete") { try await work.runUntilCancelled(returning: ()) }
        model.cancel(\.action)
        await first.value
        await second.value
        for _ in 0..<50 { await Task.yield() }
        #expect(runner.snapshot.state.isInProgress == false)
        // Back to the first process's end (it was `.running`, with no process running).
        #expect(model.action == .finished("save"))
    }
}
