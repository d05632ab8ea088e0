import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// How a load ends when its work does not cooperate, or its caller goes away (found by review): the load
/// ends at once, whatever the work does afterwards.
@Suite("LoadableController: endings", .timeLimit(.minutes(1)))
struct LoadableControllerEndingTests {
    /// Cancelling the task `load` returned, while the work ignores cancellation.
    @Test func cancellingTheOwnedTaskRestoresTheStateAtOnce() async {
        let controller = LoadableController<String>(.loaded("old"))
        let gate = Gate()
        let task = controller.load {
            await gate.wait()
            return "late"
        }
        await gate.arrived()
        task.cancel()
        await task.value
        #expect(controller.state == .loaded("old"))
        gate.open()
    }

    /// Callers cancelled right after they start, their work cooperative (a request): none is left
    /// loading (44 and 92 of 200 were, when the stop signal ended before the work).
    @Test func cancelledCallersWithCooperativeWorkNeverLeaveLoading() async {
        // A request that never answers on its own and ends when cancelled: a sleep on a clock nobody moves.
        let silentServer = ManualClock()
        var stuck = 0
        for _ in 0..<200 {
            let controller = LoadableController<String>(.loaded("old"))
            let caller = Task {
                await controller.loadAndWait {
                    try await silentServer.sleep(for: .seconds(30))
                    return "late"
                }
            }
            caller.cancel()
            await caller.value
            if controller.state != .loaded("old") { stuck += 1 }
        }
        #expect(stuck == 0, "\(stuck) of 200 cancelled loads did not go back to the state before them")
    }

    /// A timeout is for work that hangs: it ends the load although the work ignores its cancellation.
    @Test func aTimeoutEndsTheLoadAlthoughTheWorkIgnoresCancellation() async {
        let clock = ManualClock()
        let controller = LoadableController<String>(clock: clock)
        let gate = Gate()
        let task = controller.load(timeout: .seconds(1)) {
            await gate.wait()
            return "late"
        }
        await gate.arrived()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await task.value
        #expect(controller.state == .error(TimeoutError(after: .seconds(1))))
        gate.open()
        for _ in 0..<20 { await Task.yield() }
        #expect(controller.state == .error(TimeoutError(after: .seconds(1))))
    }

    /// `cancel()` lets a caller waiting in `loadAndWait` return although the work runs on.
    @Test func cancelLetsAnAwaitedLoadReturnAtOnce() async {
        let controller = LoadableController<String>(.loaded("old"))
        let gate = Gate()
        let caller = await awaitedLoad(of: controller, heldAt: gate)
        controller.cancel()
        await caller.value
        #expect(controller.state == .loaded("old"))
        gate.open()
    }

    /// Interrupts fire at their deadlines from the start, however far the clock jumps: `[1 s, 1 s]`
    /// with the clock moved 2 s at once fires both (the second was counted from the first's wake-up).
    @Test func interruptsFireAtTheirDeadlinesWhenTheClockJumps() async {
        let clock = ManualClock()
        let controller = LoadableController<String>(clock: clock)
        let fired = LockedValue<[Duration]>([])
        let gate = Gate()
        let task = controller.load(
            interrupts: [.seconds(1), .seconds(1)], onInterrupt: { elapsed in fired.withLock { $0.append(elapsed) } }
        ) {
            await gate.wait()
            return "done"
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        await eventually { fired.withLock { $0 } == [.seconds(1), .seconds(2)] }
        gate.open()
        await task.value
        #expect(controller.state == .loaded("done"))
    }

    /// A reset of a state that is already the reset one is no change: observers hear nothing.
    @Test func resettingAnAbsentStateChangesNothing() async {
        let controller = LoadableController<String>()
        let states = controller.states()
        var iterator = states.makeAsyncIterator()
        #expect(await iterator.next() == .absent)
        controller.reset()
        await controller.loadAndWait { "v" }
        // The next state the stream shows is the load's, not a second `.absent`.
        let next = await iterator.next()
        #expect(next == .loading || next == .loaded("v"))
    }

    /// Work that throws `CancellationError` by itself (an inner timeout), nothing cancelling the load:
    /// a failure, shown.
    @Test func aCancellationErrorTheWorkThrowsByItselfIsShown() async {
        let controller = LoadableController<String>()
        await controller.loadAndWait { throw CancellationError() }
        #expect(controller.state.error is CancellationError)
    }
}
