import Testing

@testable import StoreFlowable

private typealias Sim = MachineTest.Sim

/// Strict single flight at the origin: a flight cancelled during its origin call drains until its task
/// reports back; a flight created meanwhile is pending (it exists, callers join it, the key is loading)
/// and calls the origin only once the drain report arrives.
@Suite("KeyStateMachine: draining")
struct KeyStateMachineDrainTests {
    /// Why a flight calling the origin is dropped.
    enum Drop: CaseIterable, Sendable {
        /// An update begins, and finishes writing `"new"`.
        case supersededByAnUpdate
        /// Its only waiter leaves.
        case abandonedByItsWaiter
        /// Its only subscriber leaves.
        case abandonedByItsSubscriber
        /// Its only subscriber leaves before its read is reported.
        case abandonedByASubscriberStillReading
    }

    /// How the cancelled flight's task reports back.
    enum Report: CaseIterable, Sendable {
        /// `flightFailed` with a cancellation (also what a task cancelled before it started reports).
        case failed
        /// `flightReturned` with the value the origin returned anyway, which is dropped.
        case returned
    }

    /// Who asks for data while the key drains.
    enum Request: CaseIterable, Sendable {
        /// A `refresh()` caller.
        case caller
        /// A `publish(forceRefresh: true)` subscriber.
        case subscriber
    }

    /// One way a request meets a draining key.
    struct Case: Sendable, CustomTestStringConvertible {
        let drop: Drop
        let report: Report
        let request: Request

        var testDescription: String { "\(request) after F1 was \(drop), drain report \(report)" }

        static let all: [Case] = Drop.allCases.flatMap { drop in
            Report.allCases.flatMap { report in Request.allCases.map { Case(drop: drop, report: report, request: $0) } }
        }
    }

    /// A key whose flight F1 was cancelled during its origin call by `drop`; the cache holds `"stale"`
    /// (or `"new"`, written by the update that superseded F1).
    private static func draining(_ drop: Drop) -> Sim {
        var sim = MachineTest.Start.fixed.build(cache: .stale)
        switch drop {
        case .supersededByAnUpdate:
            let waiter = sim.request(.refresh)
            let (update, _) = sim.beginUpdate("new")
            sim.finishUpdate(update)
            #expect(sim.log.resolutions == [waiter ?? -1: .value("new")])
        case .abandonedByItsWaiter:
            if let waiter = sim.request(.refresh) { sim.cancel(waiter) }
        case .abandonedByItsSubscriber:
            sim.detach(sim.publish())
        case .abandonedByASubscriberStillReading:
            let subscriber = sim.attach()
            if let waiter = sim.request(.refresh) { sim.cancel(waiter) }
            sim.detach(subscriber)
        }
        #expect(sim.log.started == ["F1"])
        #expect(sim.log.cancelled == ["F1"])
        return sim
    }

    /// Reports how the cancelled flight `index` ended.
    private static func report(_ report: Report, of index: Int, in sim: inout Sim) {
        sim.completeFetch(index, with: report == .failed ? .failure(.cancelled) : .success("f\(index)"))
    }

    @Test(arguments: Drop.allCases)
    func aFlightCancelledDuringItsOriginCallDrains(_ drop: Drop) {
        var sim = Self.draining(drop)
        #expect(sim.machine.flight == nil)
        #expect(sim.machine.draining == sim.flights.first { $0.index == 1 }?.id)
        #expect(sim.status == .fixed)
        #expect(!sim.machine.isIdle)
        sim.drain()
        #expect(sim.machine.draining == nil)
        #expect(sim.machine.isIdle)
        #expect(sim.cache.value == (drop == .supersededByAnUpdate ? "new" : "stale"))
        #expect(sim.violations == [])
    }

    /// A request while the key drains creates a pending flight: it exists (the key is loading, subscribers
    /// are told) but its origin call waits; the drain report starts it, and the dropped flight's value is
    /// never written.
    @Test(arguments: Case.all)
    func aRequestWhileDrainingCreatesAPendingFlightTheDrainReportStarts(_ row: Case) {
        var sim = Self.draining(row.drop)
        let before = sim.cache.value
        var subscriber: Int?
        var waiters: [Int] = []
        switch row.request {
        case .caller: waiters = [sim.request(.refresh)].compactMap { $0 }
        case .subscriber: subscriber = sim.publish(forceRefresh: true)
        }
        #expect(sim.machine.flight?.phase == .pending)
        #expect(sim.status == .loading)
        #expect(sim.log.started == ["F1"])
        #expect(!sim.machine.isIdle)
        if let subscriber { #expect(sim.log.emissions[subscriber] == [.loading(before)]) }
        // A second caller joins the pending flight.
        waiters += [sim.request(.origin)].compactMap { $0 }
        #expect(sim.log.started == ["F1"])
        #expect(sim.machine.flight?.phase == .pending)
        Self.report(row.report, of: 1, in: &sim)
        #expect(sim.log.started == ["F1", "F2"])
        #expect(sim.machine.flight?.phase == .fetching)
        #expect(sim.machine.draining == nil)
        #expect(sim.cache.value == before)
        sim.drain()
        for waiter in waiters { #expect(sim.log.resolutions[waiter] == .value("f2")) }
        if let subscriber { #expect(sim.log.emissions[subscriber] == [.loading(before), .completed("f2")]) }
        #expect(sim.cache.value == "f2")
        #expect(sim.violations == [])
    }

    /// An update superseding a pending flight forgets it (there is no origin call to cancel); the key
    /// still drains, and the drain report then starts nothing.
    @Test(arguments: Report.allCases)
    func anUpdateSupersedingAPendingFlightForgetsIt(report: Report) {
        var sim = Self.draining(.abandonedByItsWaiter)
        let waiter = sim.request(.refresh)
        #expect(sim.machine.flight?.phase == .pending)
        let (update, _) = sim.beginUpdate("new")
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.machine.flight == nil)
        #expect(sim.flights.first { $0.index == 2 }?.forgotten == true)
        #expect(sim.machine.draining == sim.flights.first { $0.index == 1 }?.id)
        sim.finishUpdate(update)
        #expect(sim.log.resolutions == [waiter ?? -1: .value("new")])
        Self.report(report, of: 1, in: &sim)
        #expect(sim.log.started == ["F1"])
        #expect(sim.machine.isIdle)
        #expect(sim.cache.value == "new")
        #expect(sim.violations == [])
    }

    /// The last caller leaving a pending flight forgets it; the key is not idle until the drain reports.
    @Test(arguments: Report.allCases)
    func abandoningAPendingFlightForgetsIt(report: Report) {
        var sim = Self.draining(.abandonedByItsSubscriber)
        let waiter = sim.request(.refresh)
        #expect(sim.machine.flight?.phase == .pending)
        if let waiter { sim.cancel(waiter) }
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.machine.flight == nil)
        #expect(sim.status == .fixed)
        #expect(sim.flights.first { $0.index == 2 }?.forgotten == true)
        #expect(!sim.machine.isIdle)
        Self.report(report, of: 1, in: &sim)
        #expect(sim.log.started == ["F1"])
        #expect(sim.log.resolutions == [:])
        #expect(sim.machine.isIdle)
        #expect(sim.violations == [])
    }

    /// A flight whose origin call returned and that waits for its write turn does not drain when it is
    /// superseded: the next flight calls the origin at once.
    @Test(arguments: [false, true])
    func aFlightAwaitingItsWriteDoesNotDrain(supersededByTheUpdate: Bool) {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        let (update, _) = sim.beginUpdate("new")
        let waiter = sim.request(.refresh)
        sim.completeFetch(1, with: .success("f1"))
        if !supersededByTheUpdate, let waiter { sim.cancel(waiter) }
        sim.finishUpdate(update)
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.log.rejected == ["F1"])
        #expect(sim.machine.draining == nil)
        _ = sim.request(.refresh)
        #expect(sim.log.started == ["F1", "F2"])
        #expect(sim.machine.flight?.phase == .fetching)
        sim.drain()
        #expect(sim.cache.value == "f2")
        #expect(sim.violations == [])
    }

    /// Generation after generation of flights superseded during their origin call, the origin is called by
    /// one flight at a time, and every pending flight starts once the flight before it reported back.
    @Test(arguments: Report.allCases)
    func repeatedSupersedingNeverOverlapsOriginCalls(report: Report) {
        var sim = MachineTest.Start.fixedSubscribed.build(cache: .stale)
        _ = sim.request(.refresh)
        for generation in 1...20 {
            guard let calling = sim.currentFlight, calling.stage == .fetching else {
                Issue.record("generation \(generation): no flight calls the origin")
                return
            }
            // A clear supersedes it, then wants a new flight for S0 and the waiters: it is pending.
            sim.finishUpdate(sim.beginUpdate(nil).index)
            #expect(sim.machine.draining == calling.id)
            #expect(sim.machine.flight?.phase == .pending)
            if generation.isMultiple(of: 3) {
                // An update forgets the pending flight; a new caller then waits for the drain again.
                sim.finishUpdate(sim.beginUpdate("u\(generation)").index)
                #expect(sim.machine.flight == nil)
                _ = sim.request(.refresh)
                #expect(sim.machine.flight?.phase == .pending)
            }
            #expect(sim.flights.filter(\.isCallingTheOrigin).map(\.index) == [calling.index])
            Self.report(report, of: calling.index, in: &sim)
            #expect(sim.currentFlight?.stage == .fetching)
            #expect(sim.flights.filter(\.isCallingTheOrigin).count == 1)
        }
        sim.drain()
        #expect(sim.log.started.count == 21)
        #expect(sim.flights.filter(\.forgotten).count == 6)
        #expect(sim.waiterIDs.isEmpty)
        #expect(sim.log.emissions[MachineTest.s0]?.last == .completed("f\(sim.flights.last?.index ?? -1)"))
        #expect(sim.violations == [])
    }

    // MARK: The machine alone

    /// The report of the draining flight, failed or returned, starts the pending flight; it is discarded
    /// and has no other effect; a second report of it is ignored.
    @Test(arguments: Report.allCases)
    func theDrainReportStartsThePendingFlight(report: Report) throws {
        var machine = MachineTest.Machine()
        let (first, started) = machine.join(1)
        let cancelled = try #require(started.startFlight)
        #expect(machine.leave(first).cancelFlight == cancelled)
        #expect(machine.draining == cancelled)
        #expect(!machine.isIdle)
        let (_, joined) = machine.join(2)
        #expect(joined.isEmpty)
        let pending = try #require(machine.flight)
        #expect(pending.phase == .pending)
        #expect(MachineTest.Status(machine.status) == .loading)
        let action: MachineTest.Machine.Action
        switch report {
        case .failed:
            action = machine.flightFailed(cancelled, error: CancellationError())
        case .returned:
            let returned = machine.flightReturned(cancelled, writer: 9)
            #expect(returned.decision == .discard)
            action = returned.action
        }
        #expect(action.startFlight == pending.id)
        var rest = action
        rest.startFlight = nil
        #expect(rest.isEmpty)
        #expect(machine.draining == nil)
        #expect(machine.flight?.id == pending.id)
        #expect(machine.flight?.phase == .fetching)
        #expect(machine.flightFailed(cancelled, error: CancellationError()).isEmpty)
        let again = machine.flightReturned(cancelled, writer: 9)
        #expect(again.decision == .discard)
        #expect(again.action.isEmpty)
        #expect(machine.flight?.phase == .fetching)
    }

    /// Events of a pending flight (which has no origin call) are ignored until it starts.
    @Test
    func reportsOfAPendingFlightAreIgnored() throws {
        var machine = MachineTest.Machine()
        let (first, _) = machine.join(1)
        _ = machine.leave(first)
        _ = machine.join(2)
        let pending = try #require(machine.flight)
        #expect(machine.flightFailed(pending.id, error: MachineTest.Failure.fetch).isEmpty)
        let returned = machine.flightReturned(pending.id, writer: 9)
        #expect(returned.decision == .discard)
        #expect(returned.action.isEmpty)
        #expect(machine.flight?.phase == .pending)
        #expect(machine.waiters.count == 1)
    }

    /// A pending flight is forgotten without a cancellation, whether superseded or abandoned.
    @Test(arguments: [false, true])
    func aPendingFlightIsForgottenWithoutACancellation(superseded: Bool) throws {
        var machine = MachineTest.Machine()
        let (first, started) = machine.join(1)
        let cancelled = try #require(started.startFlight)
        _ = machine.leave(first)
        let (second, _) = machine.join(2)
        #expect(machine.flight?.phase == .pending)
        let action = superseded ? machine.beginUpdate(3).action : machine.leave(second)
        #expect(action.cancelFlight == nil)
        #expect(action.isEmpty)
        #expect(machine.flight == nil)
        #expect(machine.draining == cancelled)
        #expect(machine.flightFailed(cancelled, error: CancellationError()).isEmpty)
        #expect(machine.draining == nil)
    }
}
