import Testing

@testable import StoreFlowable

private typealias Snapshot = MachineTest.Snapshot

/// The reading calls (`getData`/`requireData(from: .both)`, `.origin`, `validate()`, `refresh()`) as the
/// machine sees them: `join`, `leave`, and the flight's `flightReturned`/`flightFailed`/`flightSaved`.
@Suite("KeyStateMachine: fetch")
struct KeyStateMachineFetchTests {
    /// One row of the reading-call transition table.
    struct Case: Sendable, CustomTestStringConvertible {
        let start: MachineTest.Start
        let cache: MachineTest.Cache
        let read: MachineTest.Read
        let outcome: MachineTest.Outcome

        var testDescription: String { "\(read) from \(start), cache \(cache), \(outcome)" }

        static let all: [Case] = MachineTest.Start.allCases.flatMap { start in
            MachineTest.Cache.allCases.flatMap { cache in
                MachineTest.Read.allCases.flatMap { read in
                    MachineTest.Outcome.allCases.map { Case(start: start, cache: cache, read: read, outcome: $0) }
                }
            }
        }
    }

    @Test(arguments: Case.all)
    func readingCallFollowsTheTransitionTable(_ row: Case) {
        var sim = row.start.build(cache: row.cache)
        let waiter = sim.request(row.read)
        #expect(waiter == (row.read.joins(row.cache) ? MachineTest.w1 : nil))
        sim.drain(row.outcome)
        #expect(sim.violations == [])
        MachineTest.expectMatch(sim.snapshot, Self.expected(row))
    }

    /// What the promises say a reading call does in `row`: W1 joins (unless the valid cache serves it),
    /// then all work in progress drains.
    private static func expected(_ row: Case) -> Snapshot {
        let (s0, w0) = (MachineTest.s0, MachineTest.w0)
        let joined = row.read.joins(row.cache) ? [MachineTest.w1] : []
        var expected = Snapshot(cache: row.cache.value)
        switch row.start {
        case .fixed:
            // Nobody else: W1's own flight, and the key is idle after a success.
            expected.isIdle = true
            guard !joined.isEmpty else { break }
            let end = MachineTest.FlightEnd.fetching(row.outcome, value: "f1")
            expected.log.started = ["F1"]
            expected.settle(end, audience: [], waiters: joined, content: nil)
            expected.isIdle = end.isSaved
        case .fixedSubscribed, .failed:
            // A new flight that S0 sees loading with the content it holds.
            expected.content = "old"
            expected.status = row.start == .failed ? .error("setup") : .fixed
            guard !joined.isEmpty else { break }
            expected.log.started = ["F1"]
            expected.log.emit(s0, .loading("old"))
            expected.settle(.fetching(row.outcome, value: "f1"), audience: [s0], waiters: joined, content: "old")
        case .fetching:
            // W1 joins F0: single flight.
            expected.settle(.fetching(row.outcome, value: "f0"), audience: [s0], waiters: [w0] + joined, content: "old")
        case .awaitingWrite:
            // W1 joins F0, but U0 wins: F0 began while U0 wrote, so it is cancelled and its queued write
            // rejected (its outcome never matters); everyone waiting receives "u0" and S0 sees it completed.
            expected.log.emit(s0, .completed("u0"))
            for waiter in [w0] + joined { expected.log.resolutions[waiter] = .value("u0") }
            expected.log.cancelled = ["F0"]
            expected.log.rejected = ["F0"]
            expected.cache = "u0"
            expected.content = "u0"
        case .awaitingWriteBehindClear:
            // W1 joins F0, which the clear U0 keeps: S0 sees loading with no content, then F0 writes and
            // its outcome reaches S0 and every waiter.
            expected.log.emit(s0, .loading(nil))
            expected.log.granted = ["F0"]
            expected.cache = nil
            expected.settle(.fetched(row.outcome, value: "f0"), audience: [s0], waiters: [w0] + joined, content: nil)
        case .saving:
            // W1 joins F0, which already writes.
            expected.settle(.fetched(row.outcome, value: "f0"), audience: [s0], waiters: [w0] + joined, content: "old")
        }
        return expected
    }

    // MARK: Single flight

    @Test(arguments: [1, 2, 10, 1_000])
    func concurrentCallersShareOneFlight(count: Int) {
        var sim = MachineTest.Start.fixed.build(cache: .none)
        let waiters = (0..<count).compactMap { _ in sim.request(.origin) }
        #expect(waiters.count == count)
        #expect(sim.log.started == ["F1"])
        sim.drain()
        #expect(sim.log.started == ["F1"])
        #expect(sim.log.resolutions.count == count)
        #expect(Set(sim.log.resolutions.values) == [.value("f1")])
        #expect(sim.machine.isIdle)
        #expect(sim.violations == [])
    }

    @Test
    func aJoinDuringAFetchStartsNothingAndEmitsNothing() {
        var machine = MachineTest.Machine()
        let (_, first) = machine.join(1)
        #expect(first.startFlight != nil)
        let (_, second) = machine.join(2)
        #expect(second.isEmpty)
        #expect(machine.waiters.count == 2)
    }

    // MARK: Leaving

    @Test
    func aCallerLeavingKeepsTheFlightForTheOthers() {
        var sim = MachineTest.Start.fixed.build(cache: .none)
        let leaving = sim.request(.refresh)
        let staying = sim.request(.refresh)
        if let leaving { sim.cancel(leaving) }
        #expect(sim.log.cancelled == [])
        #expect(sim.status == .loading)
        sim.drain()
        #expect(sim.log.resolutions == [staying ?? -1: .value("f1")])
        #expect(sim.violations == [])
    }

    /// Promise 7: with nobody left, a flight that is not yet saving is cancelled, and a queued write is dropped.
    @Test(arguments: [false, true])
    func theLastCallerLeavingCancelsAFlightNotYetSaving(returnedBehindAnUpdate: Bool) {
        var sim = MachineTest.Start.fixed.build(cache: .none)
        if returnedBehindAnUpdate { _ = sim.beginUpdate("new") }
        let waiter = sim.request(.refresh)
        if returnedBehindAnUpdate { sim.completeFetch(1, with: .success("f1")) }
        if let waiter { sim.cancel(waiter) }
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.log.rejected == (returnedBehindAnUpdate ? ["F1"] : []))
        #expect(sim.machine.flight == nil)
        sim.drain()
        #expect(sim.log.granted == [])
        #expect(sim.log.resolutions == [:])
        #expect(sim.cache.value == (returnedBehindAnUpdate ? "new" : nil))
        #expect(sim.machine.isIdle)
        #expect(sim.violations == [])
    }

    @Test
    func theLastSubscriberLeavingCancelsAFetchAndForgetsTheContent() {
        var sim = MachineTest.Start.fixed.build(cache: .stale)
        let subscriber = sim.publish()
        #expect(sim.machine.content == "stale")
        sim.detach(subscriber)
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.machine.content == nil)
        // F1's origin call may still run: the key drains until its task reports back.
        #expect(sim.machine.draining != nil)
        #expect(!sim.machine.isIdle)
        sim.drain()
        #expect(sim.machine.isIdle)
        #expect(sim.cache.value == "stale")
        #expect(sim.violations == [])
    }

    @Test
    func aSavingFlightOutlivesItsLastCaller() {
        var sim = MachineTest.Start.fixed.build(cache: .none)
        let waiter = sim.request(.refresh)
        sim.completeFetch(1, with: .success("f1"))
        if let waiter { sim.cancel(waiter) }
        #expect(sim.log.cancelled == [])
        #expect(sim.status == .loading)
        #expect(!sim.machine.isIdle)
        sim.completeSave(1)
        #expect(sim.cache.value == "f1")
        #expect(sim.log.resolutions == [:])
        #expect(sim.machine.isIdle)
        #expect(sim.violations == [])
    }

    @Test
    func aSubscriberLeavingKeepsTheFlightForAWaiter() {
        var sim = MachineTest.Start.fixed.build(cache: .none)
        let subscriber = sim.publish()
        let waiter = sim.request(.both)
        sim.detach(subscriber)
        #expect(sim.log.cancelled == [])
        sim.drain()
        #expect(sim.log.resolutions == [waiter ?? -1: .value("f1")])
        #expect(sim.log.emissions[subscriber] == [.loading(nil)])
    }

    // MARK: Flight events

    @Test
    func eventsOfAFlightThatIsNotCurrentAreIgnored() {
        var machine = MachineTest.Machine()
        let (_, action) = machine.join(1)
        let flight = action.startFlight ?? 0
        let stray = machine.flightReturned(flight + 100, writer: 1)
        #expect(stray.decision == .discard)
        #expect(stray.action.isEmpty)
        #expect(machine.flightFailed(flight + 100, error: MachineTest.Failure.fetch).isEmpty)
        #expect(machine.flight?.id == flight)
        #expect(machine.flight?.phase == .fetching)
        #expect(machine.waiters.count == 1)
    }

    @Test
    func aFailureReportedAfterTheOriginReturnedIsIgnored() {
        var machine = MachineTest.Machine()
        let (_, action) = machine.join(1)
        let flight = action.startFlight ?? 0
        #expect(machine.flightReturned(flight, writer: 1).decision == .write)
        #expect(machine.flightFailed(flight, error: MachineTest.Failure.fetch).isEmpty)
        let again = machine.flightReturned(flight, writer: 1)
        #expect(again.decision == .discard)
        #expect(again.action.isEmpty)
        #expect(machine.flight?.phase == .saving)
    }

    /// Promise 4: a failed fetch keeps the last content, and waiters get the error.
    @Test(arguments: [MachineTest.Outcome.fetchFailure, .saveFailure])
    func aFailedFlightKeepsTheLastContent(outcome: MachineTest.Outcome) {
        var sim = MachineTest.Start.fixedSubscribed.build(cache: .stale)
        let waiter = sim.request(.validate)
        sim.drain(outcome)
        let error = outcome == .fetchFailure ? "fetch" : "save"
        #expect(sim.log.emissions[MachineTest.s0] == [.loading("old"), .error("old", error)])
        #expect(sim.log.resolutions == [waiter ?? -1: .failure(error)])
        #expect(sim.status == .error(error))
        #expect(sim.machine.content == "old")
        #expect(sim.cache.value == "stale")
    }

    @Test
    func aSuccessForgetsTheRememberedError() {
        var sim = MachineTest.Start.failed.build(cache: .valid)
        _ = sim.request(.refresh)
        #expect(sim.status == .loading)
        sim.drain()
        #expect(sim.status == .fixed)
        #expect(sim.machine.lastError == nil)
    }
}
