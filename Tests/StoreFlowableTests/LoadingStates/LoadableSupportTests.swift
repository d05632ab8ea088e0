import Observation
import StoreFlowableTesting
import Testing

@testable import StoreFlowable

private let down = TestError("down")

/// A view model in the seed's style: its own properties, loaded through `LoadableSupport` and
/// `ProcessSupport`.
@MainActor
@Observable
private final class NumbersModel: LoadableSupport, ProcessSupport {
    enum Action: Equatable, Sendable {
        case save
        case delete
    }

    var numbers: LoadableState<[Int]> = .absent
    var title: LoadableState<String> = .absent
    var action: ProcessState<Action> = .idle
    @ObservationIgnored let loadingSlots: LoadingSlots

    init(clock: any Clock<Duration> = ContinuousClock()) {
        loadingSlots = LoadingSlots(clock: clock)
    }
}

@MainActor
@Suite("LoadableSupport and ProcessSupport", .timeLimit(.minutes(1)))
struct LoadableSupportTests {
    @Test func aLoadWritesLoadingAtOnceThenTheValue() async {
        let model = NumbersModel()
        let gate = Gate()
        let task = model.load(\.numbers) {
            await gate.wait(); return [1, 2]
        }
        #expect(model.numbers == .loading)
        gate.open()
        await task.value
        await eventuallyOnMain { model.numbers == .loaded([1, 2]) }
    }

    @Test func anAwaitedLoadHasWrittenItsEndWhenItReturns() async {
        let model = NumbersModel()
        await model.loadAndWait(\.numbers) { throw down }
        #expect(model.numbers == .error(down))
    }

    /// The seed kept one task slot per key path for every instance: loading on one instance cancelled
    /// another's load.
    @Test func twoInstancesNeverShareATaskSlot() async {
        let first = NumbersModel()
        let second = NumbersModel()
        let work = Probe()
        let gate = Gate()
        let firstTask = first.load(\.numbers) {
            await gate.wait(); return [1]
        }
        let secondTask = second.load(\.numbers) { try await work.runUntilCancelled(returning: [2]) }
        await work.started()
        gate.open()
        await firstTask.value
        await eventuallyOnMain { first.numbers == .loaded([1]) }
        #expect(second.numbers == .loading)
        #expect(!work.sawCancellationSoFar)
        second.cancel(\.numbers)
        await secondTask.value
        #expect(await work.wasCancelled())
        #expect(second.numbers == .absent)
    }

    @Test func twoPropertiesOfOneInstanceLoadIndependently() async {
        let model = NumbersModel()
        let work = Probe()
        let numbers = model.load(\.numbers) { try await work.runUntilCancelled(returning: [1]) }
        await work.started()
        await model.loadAndWait(\.title) { "title" }
        #expect(model.title == .loaded("title"))
        #expect(model.numbers == .loading)
        #expect(!work.sawCancellationSoFar)
        model.reset(\.numbers)
        await numbers.value
        #expect(model.numbers == .absent)
    }

    @Test func aSupersededLoadNeverWritesTheProperty() async {
        let model = NumbersModel()
        let first = Probe()
        let firstTask = model.load(\.numbers) { try await first.runUntilCancelled(returning: [0]) }
        await first.started()
        await model.loadAndWait(\.numbers) { [2] }
        await firstTask.value
        for _ in 0..<20 { await Task.yield() }
        #expect(await first.wasCancelled())
        #expect(model.numbers == .loaded([2]))
    }

    /// A value the class assigned itself between loads is what a cancel goes back to.
    @Test func cancelGoesBackToTheValueTheOwnerSetItself() async {
        let model = NumbersModel()
        await model.loadAndWait(\.numbers) { [1] }
        model.numbers = .loaded([42])
        let work = Probe()
        let task = model.load(\.numbers) { try await work.runUntilCancelled(returning: [7]) }
        await work.started()
        #expect(model.numbers == .loading)
        model.cancel(\.numbers)
        #expect(model.numbers == .loaded([42]))
        await task.value
        for _ in 0..<20 { await Task.yield() }
        #expect(model.numbers == .loaded([42]))
    }

    @Test func streamedStatesReachThePropertyInOrder() async {
        let model = NumbersModel()
        let step = Gate()
        let task = model.loadStreaming(\.numbers) { yield in
            yield(.loaded([1]))
            await step.wait()
            yield(.loaded([1, 2]))
        }
        await step.arrived()
        await eventuallyOnMain { model.numbers == .loaded([1]) }
        step.open()
        await task.value
        await eventuallyOnMain { model.numbers == .loaded([1, 2]) }
    }

    @Test func aTimeoutFromTheSlotsClockFailsTheLoad() async {
        let clock = ManualClock()
        let model = NumbersModel(clock: clock)
        let task = model.load(\.numbers, timeout: .seconds(3)) {
            try await clock.sleep(for: .seconds(3_600))  // work that would take an hour
            return []
        }
        await clock.sleepers(atLeast: 2)  // the work and the timeout
        clock.advance(by: .seconds(3))
        await task.value
        await eventuallyOnMain { model.numbers == .error(TimeoutError(after: .seconds(3))) }
    }

    @Test func observationSeesThePropertyChange() async {
        let model = NumbersModel()
        let changed = LockedValue(false)
        withObservationTracking {
            _ = model.numbers
        } onChange: {
            changed.withLock { $0 = true }
        }
        model.load(\.numbers) { [1] }
        #expect(changed.withLock { $0 })
    }

    @Test func aProcessWritesRunningThenItsEnd() async {
        let model = NumbersModel()
        let gate = Gate()
        let task = model.run(\.action, as: .save) { await gate.wait() }
        #expect(model.action == .running(.save))
        gate.open()
        await task.value
        await eventuallyOnMain { model.action == .finished(.save) }
        await model.runAndWait(\.action, as: .delete) { throw down }
        #expect(model.action.hasFailed(.delete))
        model.reset(\.action)
        #expect(model.action == .idle)
    }

    @Test func aReleasedModelCancelsItsLoads() async {
        var model: NumbersModel? = NumbersModel()
        let work = Probe()
        let task = model?.load(\.numbers) { try await work.runUntilCancelled(returning: [1]) }
        await work.started()
        model = nil
        await task?.value
        #expect(await work.wasCancelled())
    }
}
