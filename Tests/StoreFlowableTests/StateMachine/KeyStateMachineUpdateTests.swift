import Testing

@testable import StoreFlowable

private typealias Snapshot = MachineTest.Snapshot

/// `update(newData:)` and `clear()` as the machine sees them: `beginUpdate`, then `finishUpdate` once
/// the cache write is done (after the write turn was granted, if it had to wait).
@Suite("KeyStateMachine: update and clear")
struct KeyStateMachineUpdateTests {
    /// One row of the update transition table.
    struct Case: Sendable, CustomTestStringConvertible {
        let start: MachineTest.Start
        let cache: MachineTest.Cache
        /// The value written; `nil` for `update(nil)` and `clear()`.
        let value: String?
        let writeFails: Bool
        let outcome: MachineTest.Outcome

        var testDescription: String {
            let call = value.map { "update(\($0))" } ?? "clear"
            return "\(call)\(writeFails ? " failing" : "") from \(start), cache \(cache), \(outcome)"
        }

        static let all: [Case] = MachineTest.Start.allCases.flatMap { start in
            MachineTest.Cache.allCases.flatMap { cache in
                ["new", nil].flatMap { value in
                    [false, true].flatMap { writeFails in
                        MachineTest.Outcome.allCases.map {
                            Case(start: start, cache: cache, value: value, writeFails: writeFails, outcome: $0)
                        }
                    }
                }
            }
        }
    }

    @Test(arguments: Case.all)
    func updateFollowsTheTransitionTable(_ row: Case) {
        var sim = row.start.build(cache: row.cache)
        let (index, mayWriteNow) = sim.beginUpdate(row.value)
        #expect(index == 1)
        // Only a write already in progress (U0, or F0 saving) makes the update wait.
        #expect(mayWriteNow == !(row.start.isAwaitingWrite || row.start == .saving))
        // A flight that has not reached the cache is superseded at once (promise 5).
        let superseded = row.start == .fetching || row.start.isAwaitingWrite
        #expect(sim.log.cancelled == (superseded ? ["F0"] : []))
        // Only a flight cancelled during its origin call drains; F0 awaiting its write had returned.
        #expect((sim.machine.draining != nil) == (row.start == .fetching))
        #expect(sim.status == (superseded ? .fixed : Self.statusBeforeTheWrite(row.start)))
        sim.drain(row.outcome, failingUpdates: row.writeFails ? [1] : [])
        #expect(sim.violations == [])
        MachineTest.expectMatch(sim.snapshot, Self.expected(row))
    }

    private static func statusBeforeTheWrite(_ start: MachineTest.Start) -> MachineTest.Status {
        switch start {
        case .fixed, .fixedSubscribed: .fixed
        case .fetching, .awaitingWrite, .awaitingWriteBehindClear, .saving: .loading
        case .failed: .error("setup")
        }
    }

    /// What the promises say `update`/`clear` does in `row`: U1 begins, then all work in progress drains.
    private static func expected(_ row: Case) -> Snapshot {
        let (s0, w0) = (MachineTest.s0, MachineTest.w0)
        let writeError = MachineTest.Failure.write.name
        var expected = Snapshot(cache: row.cache.value)
        let audience = row.start.hasSubscriber ? [s0] : []
        var content: String? = row.start.hasSubscriber ? "old" : nil
        var waiting: [Int] = []
        /// Whether F1 is calling the origin when U1 writes (it began while U1 waited for its turn).
        var flightRunning = false

        // What happens before U1 writes.
        switch row.start {
        case .fixed, .fixedSubscribed, .failed:
            break
        case .fetching:
            // F0 is cancelled; W0 now waits for U1.
            expected.log.cancelled = ["F0"]
            waiting = [w0]
        case .awaitingWrite:
            // F0 is cancelled and its queued write rejected; U0 finishes, then hands the turn to U1.
            expected.log.cancelled = ["F0"]
            expected.log.rejected = ["F0"]
            expected.log.resolutions[w0] = .value("u0")
            expected.log.emit(s0, .completed("u0"))
            expected.cache = "u0"
            content = "u0"
            expected.log.granted = ["U1"]
        case .awaitingWriteBehindClear:
            // F0 is cancelled and its queued write rejected; the clear U0 finishes: the cache is empty and
            // W0 still waits, so U0 starts F1 (S0 sees loading with no content), then hands the turn to U1.
            expected.log.cancelled = ["F0"]
            expected.log.rejected = ["F0"]
            expected.log.started = ["F1"]
            expected.log.emit(s0, .loading(nil))
            expected.cache = nil
            content = nil
            waiting = [w0]
            flightRunning = true
            expected.log.granted = ["U1"]
        case .saving:
            // F0 is already writing: it finishes first, then hands the turn to U1.
            expected.settle(.fetched(row.outcome, value: "f0"), audience: [s0], waiters: [w0], content: "old")
            content = expected.content
            expected.log.granted = ["U1"]
        }

        // U1 writes. A running F1 began while U1 waited; every start state that has one also has S0, so F1
        // is never abandoned for want of an audience.
        let f1End = MachineTest.FlightEnd.fetching(row.outcome, value: "f1")
        if row.writeFails {
            // The failure is remembered and answers the waiters; a running flight then decides for S0.
            for waiter in waiting { expected.log.resolutions[waiter] = .failure(writeError) }
            let state: MachineTest.Emitted = flightRunning ? .loading(content) : .error(content, writeError)
            for subscriber in audience { expected.log.emit(subscriber, state) }
            expected.status = .error(writeError)
            expected.content = content
            if flightRunning { expected.settle(f1End, audience: audience, content: content) }
        } else if let value = row.value {
            // Update wins: the cache and every subscriber hold the value; waiters receive it; a flight that
            // began before U1 finished is cancelled.
            if flightRunning { expected.log.cancelled.append("F1") }
            expected.cache = value
            for waiter in waiting { expected.log.resolutions[waiter] = .value(value) }
            for subscriber in audience { expected.log.emit(subscriber, .completed(value)) }
            expected.status = .fixed
            expected.content = audience.isEmpty ? nil : value
        } else {
            // Clear: the cache is empty; whoever subscribes or waits gets a flight (promises 3 and 6): a
            // running one is kept, else a new one starts.
            expected.cache = nil
            expected.status = .fixed
            expected.content = nil
            if !audience.isEmpty || !waiting.isEmpty {
                expected.log.started = ["F1"]
                for subscriber in audience { expected.log.emit(subscriber, .loading(nil)) }
                expected.settle(f1End, audience: audience, waiters: waiting, content: nil)
            }
        }
        expected.isIdle = audience.isEmpty && expected.status == .fixed
        return expected
    }

    // MARK: The promises, one by one

    /// Promise 6: clear keeps the subscribers, which see the key load again.
    @Test
    func clearKeepsSubscribersAndFetchesForThem() {
        var sim = MachineTest.Start.fixedSubscribed.build(cache: .valid)
        _ = sim.beginUpdate(nil)
        sim.drain()
        #expect(sim.log.emissions[MachineTest.s0] == [.loading(nil), .completed("f1")])
        #expect(sim.machine.subscribers.count == 1)
        #expect(sim.cache.value == "f1")
    }

    /// Promise 3: waiters whose flight an update(nil) superseded are not left waiting. The superseded F1
    /// drains, so the clear's flight F2 exists (loading) but calls the origin only once F1 reported back.
    @Test(arguments: [false, true])
    func clearWithOnlyWaitersFetchesForThem(drainReportReturns: Bool) {
        var sim = MachineTest.Start.fixed.build(cache: .none)
        let waiter = sim.request(.refresh)
        _ = sim.beginUpdate(nil)
        #expect(sim.log.cancelled == ["F1"])
        sim.finishUpdate(1)
        #expect(sim.log.started == ["F1"])
        #expect(sim.machine.flight?.phase == .pending)
        #expect(sim.status == .loading)
        #expect(sim.log.emissions.isEmpty)
        sim.completeFetch(1, with: drainReportReturns ? .success("f1") : .failure(.cancelled))
        #expect(sim.log.started == ["F1", "F2"])
        #expect(sim.machine.flight?.phase == .fetching)
        sim.drain()
        #expect(sim.log.resolutions == [waiter ?? -1: .value("f2")])
        #expect(sim.machine.isIdle)
        #expect(sim.violations == [])
    }

    @Test
    func clearWithNobodyAttachedDoesNotFetch() {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        _ = sim.beginUpdate(nil)
        sim.drain()
        #expect(sim.log.started == [])
        #expect(sim.cache.value == nil)
        #expect(sim.machine.isIdle)
    }

    /// Promise 5: callers waiting for a superseded flight receive the update's value.
    @Test
    func waitersOfASupersededFlightReceiveTheUpdate() {
        var sim = MachineTest.Start.fetching.build(cache: .stale)
        let waiter = sim.request(.both)
        _ = sim.beginUpdate("new")
        sim.finishUpdate(1)
        #expect(sim.log.resolutions == [MachineTest.w0: .value("new"), waiter ?? -1: .value("new")])
        #expect(sim.log.emissions[MachineTest.s0] == [.completed("new")])
        // F0's origin call returns late: it is dropped and never writes.
        sim.completeFetch(0, with: .success("f0"))
        #expect(sim.cache.value == "new")
        #expect(sim.status == .fixed)
        #expect(sim.violations == [])
    }

    /// Promise 8 for updates: a failed write reports the last good content and is remembered.
    @Test
    func aFailedUpdateKeepsTheLastGoodContent() {
        var sim = MachineTest.Start.fixedSubscribed.build(cache: .valid)
        _ = sim.beginUpdate("new")
        sim.finishUpdate(1, failing: true)
        #expect(sim.log.emissions[MachineTest.s0] == [.error("old", "write")])
        #expect(sim.status == .error("write"))
        #expect(sim.machine.content == "old")
        #expect(!sim.machine.isIdle)
    }

    @Test
    func aSuccessfulUpdateForgetsTheRememberedError() {
        var sim = MachineTest.Start.failed.build(cache: .valid)
        _ = sim.beginUpdate("new")
        sim.finishUpdate(1)
        #expect(sim.status == .fixed)
        #expect(sim.log.emissions[MachineTest.s0] == [.completed("new")])
    }
}
