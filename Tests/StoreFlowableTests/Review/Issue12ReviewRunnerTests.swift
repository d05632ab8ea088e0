import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// A class whose release a test can see through a weak reference.
private final class Token: Sendable {}

/// The stored dictionaries of a runner, read through reflection (they are private).
private func guardedCounts<State>(_ runner: WorkRunner<State>) -> (tasks: Int, stops: Int)? {
    func child(_ value: Any, _ label: String) -> Any? {
        Mirror(reflecting: value).children.first { $0.label == label }?.value
    }
    guard let locked = child(runner, "guarded"), let guarded = child(locked, "value"),
        let tasks = child(guarded, "tasks"), let stops = child(guarded, "stops")
    else { return nil }
    return (Mirror(reflecting: tasks).children.count, Mirror(reflecting: stops).children.count)
}

@Suite("Issue12Review: WorkRunner endings", .timeLimit(.minutes(1)))
struct Issue12ReviewRunnerTests {
    /// `onInterrupt` is documented to run "while the load goes on". An interrupt whose sleep was woken
    /// (the clock reached its deadline) after `cancel()` returned still calls `onInterrupt`:
    /// `Interrupts.run` does not look at the cancellation (or whether the load is still current) once
    /// the sleep has returned, and `group.cancelAll()` cannot take back a sleep already resumed.
    @Test func anInterruptDoesNotFireForALoadAlreadyCancelled() async {
        var firedAfterCancel = 0
        for _ in 0..<50 {
            let clock = ManualClock()
            let controller = LoadableController<Int>(clock: clock)
            let fired = LockedValue(0)
            let work = Probe()
            // An awaited load: `cancel()` has no task of it to cancel, only its stop signal to resume.
            let task = Task {
                await controller.loadAndWait(
                    interrupts: [.seconds(1)], onInterrupt: { _ in fired.withLock { $0 += 1 } }
                ) {
                    try await work.runUntilCancelled(returning: 1)
                }
            }
            await work.started()
            await clock.sleepers(atLeast: 1)
            controller.cancel()  // the load has ended: nothing of it should run any more
            clock.advance(by: .seconds(1))
            await task.value
            _ = await work.wasCancelled()
            firedAfterCancel += fired.withLock { $0 }
        }
        #expect(firedAfterCancel == 0, "onInterrupt ran for a cancelled load \(firedAfterCancel) times of 50")
    }

    /// Every load leaves nothing behind in the runner (its task, its stop signal), and the work's
    /// captures are released once the load has ended, even while the caller keeps the returned task.
    @Test func loadsLeaveNothingBehind() async {
        let controller = LoadableController<Int>()
        let runner =
            Mirror(reflecting: controller).children.first { $0.label == "runner" }?.value
            as? WorkRunner<LoadableState<Int>>
        #expect(runner != nil)
        weak var weakToken: Token?
        var kept: [Task<Void, Never>] = []
        for round in 0..<2000 {
            let token = Token()
            if round == 0 { weakToken = token }
            let task = controller.load {
                _ = token; return round
            }
            kept.append(task)
            if round % 3 == 0 { controller.cancel() }
            if round % 7 == 0 { await task.value }
        }
        for task in kept { await task.value }
        await controller.loadAndWait { 0 }
        for _ in 0..<100 { await Task.yield() }
        #expect(runner.flatMap(guardedCounts) != nil)
        if let runner, let counts = guardedCounts(runner) {
            #expect(counts.tasks == 0, "tasks left in the runner")
            #expect(counts.stops == 0, "stop signals left in the runner")
        }
        #expect(weakToken == nil, "the first load's work is still retained")
    }
}

@Suite("Issue12Review: cancelled callers", .timeLimit(.minutes(1)))
struct Issue12ReviewCancelledCallerTests {
    /// `loadAndWait` says cancelling the calling task cancels the load and that the work runs "with the
    /// calling task's priority and task-local values". The work now runs in an unstructured `Task`,
    /// which does not inherit the caller's cancellation: a caller cancelled before it calls
    /// `loadAndWait` still has its work started in a task that is not cancelled (it is cancelled only
    /// after the group returned), so the work's own `Task.isCancelled` check at its start can pass and
    /// side effects begin for a load that was over before it started.
    @Test func theWorkOfACancelledCallerStartsCancelled() async {
        let controller = LoadableController<Int>()
        let sawRunning = LockedValue(0)
        for _ in 0..<50 {
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                await controller.loadAndWait {
                    if !Task.isCancelled { sawRunning.withLock { $0 += 1 } }
                    return 1
                }
            }
            await task.value
        }
        for _ in 0..<100 { await Task.yield() }
        #expect(sawRunning.withLock { $0 } == 0, "work started uncancelled for a cancelled caller")
        #expect(controller.state == .absent)
    }
}
