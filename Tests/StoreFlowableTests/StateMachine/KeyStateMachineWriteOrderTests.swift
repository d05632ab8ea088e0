import Testing

@testable import StoreFlowable

/// The write turn: one cache write at a time, in arrival order; no fetch that began before an update
/// writing after it; and no fetch writing after a successful non-nil update that finished while the fetch
/// was not yet saving (update wins).
@Suite("KeyStateMachine: write order")
struct KeyStateMachineWriteOrderTests {
    /// Who wants the flight that begins while an update writes.
    enum Audience: CaseIterable, Sendable {
        /// S0, attached before the update, and the caller W1 that starts the flight.
        case subscriberAndWaiter
        /// Only the caller W1 that starts the flight.
        case waiter
    }

    /// Promise 5: a flight already saving completes first; then the update writes and wins.
    @Test(arguments: [false, true])
    func anUpdateWaitsForASavingFlightThenWins(saveFails: Bool) {
        var sim = MachineTest.Start.saving.build(cache: .stale)
        let (update, mayWriteNow) = sim.beginUpdate("new")
        #expect(!mayWriteNow)
        #expect(sim.log.cancelled == [])
        sim.completeSave(0, failing: saveFails)
        #expect(sim.log.granted == ["U\(update)"])
        sim.finishUpdate(update)
        let first: MachineTest.Emitted = saveFails ? .error("old", "save") : .completed("f0")
        #expect(sim.log.emissions[MachineTest.s0] == [first, .completed("new")])
        #expect(sim.cache.value == "new")
        #expect(sim.status == .fixed)
        #expect(sim.violations == [])
    }

    @Test
    func queuedUpdatesWriteInArrivalOrder() {
        var sim = MachineTest.Start.fixedSubscribed.build(cache: .valid)
        let updates = ["a", "b", "c"].map { sim.beginUpdate($0) }
        #expect(updates.map(\.mayWriteNow) == [true, false, false])
        for (index, _) in updates {
            sim.finishUpdate(index)
        }
        #expect(sim.log.granted == ["U2", "U3"])
        #expect(sim.log.emissions[MachineTest.s0] == [.completed("a"), .completed("b"), .completed("c")])
        #expect(sim.cache.value == "c")
        #expect(sim.violations == [])
    }

    /// Promise 5: a flight that began before the update never writes, whatever it reports later.
    @Test(arguments: [false, true])
    func anUpdateSupersedesAFlightThatBeganBeforeIt(flightReturnedFirst: Bool) {
        var sim = MachineTest.Start.fixedSubscribed.build(cache: .stale)
        _ = sim.beginUpdate("u1")
        _ = sim.request(.refresh)
        if flightReturnedFirst { sim.completeFetch(1, with: .success("f1")) }
        let (update, _) = sim.beginUpdate("u2")
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.log.rejected == (flightReturnedFirst ? ["F1"] : []))
        sim.drain()
        #expect(sim.log.granted == ["U\(update)"])
        #expect(sim.cache.value == "u2")
        #expect(sim.log.emissions[MachineTest.s0]?.last == .completed("u2"))
        #expect(sim.violations == [])
    }

    /// Promise 5 (update wins): a flight that began while an update was writing has not reached the cache
    /// when the update finishes, so the update supersedes it: the flight is cancelled (its queued write
    /// rejected if it had returned), its waiter receives the update's value, every subscriber sees it
    /// completed, and the flight never overwrites it, whatever it reports later.
    @Test(arguments: Audience.allCases, [false, true])
    func aFlightThatBeganDuringAnUpdateIsSupersededByIt(audience: Audience, flightReturnedFirst: Bool) {
        let subscribed = audience == .subscriberAndWaiter
        var sim = (subscribed ? MachineTest.Start.fixedSubscribed : .fixed).build(cache: .valid)
        let (update, _) = sim.beginUpdate("new")
        let waiter = sim.request(.refresh)
        #expect(sim.log.started == ["F1"])
        if flightReturnedFirst { sim.completeFetch(1, with: .success("f1")) }
        sim.finishUpdate(update)
        #expect(sim.log.resolutions == [waiter ?? -1: .value("new")])
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.log.rejected == (flightReturnedFirst ? ["F1"] : []))
        #expect(sim.machine.flight == nil)
        #expect(sim.status == .fixed)
        if !flightReturnedFirst { sim.completeFetch(1, with: .success("f1")) }
        sim.drain()
        #expect(sim.log.granted == [])
        #expect(sim.log.emissions == (subscribed ? [MachineTest.s0: [.loading("old"), .completed("new")]] : [:]))
        #expect(sim.cache.value == "new")
        #expect(sim.machine.content == (subscribed ? "new" : nil))
        #expect(sim.machine.isIdle == !subscribed)
        #expect(sim.violations == [])
    }

    /// The companion of the rule above: a clear (`update(nil)`) leaves the key empty, so a flight that
    /// began while it was writing is wanted: it fetches for its subscriber and waiter (promises 3 and 6).
    /// The clear shows loading with no content, resolves nobody, hands the flight the write turn if it had
    /// returned, and the flight's value then reaches everyone.
    @Test(arguments: Audience.allCases, [false, true])
    func aFlightThatBeganDuringAClearWritesAfterIt(audience: Audience, flightReturnedFirst: Bool) {
        let subscribed = audience == .subscriberAndWaiter
        var sim = (subscribed ? MachineTest.Start.fixedSubscribed : .fixed).build(cache: .valid)
        let (update, _) = sim.beginUpdate(nil)
        let waiter = sim.request(.refresh)
        if flightReturnedFirst { sim.completeFetch(1, with: .success("f1")) }
        sim.finishUpdate(update)
        #expect(sim.log.resolutions == [:])
        #expect(sim.log.cancelled == [])
        #expect(sim.log.granted == (flightReturnedFirst ? ["F1"] : []))
        #expect(sim.status == .loading)
        sim.drain()
        #expect(sim.log.started == ["F1"])
        #expect(sim.log.resolutions == [waiter ?? -1: .value("f1")])
        let seen: [MachineTest.Emitted] = [.loading("old"), .loading(nil), .completed("f1")]
        #expect(sim.log.emissions == (subscribed ? [MachineTest.s0: seen] : [:]))
        #expect(sim.cache.value == "f1")
        #expect(sim.machine.isIdle == !subscribed)
        #expect(sim.violations == [])
    }

    /// A flight that began while an update waited for its turn outlives a clear that wrote before that
    /// update, but not the update itself: when the update finishes, the flight is superseded.
    @Test(arguments: [false, true])
    func aFlightThatOutlivedAClearIsSupersededByTheUpdateQueuedBehindIt(flightReturnedFirst: Bool) {
        var sim = MachineTest.Start.fixedSubscribed.build(cache: .valid)
        let (clear, _) = sim.beginUpdate(nil)
        let (update, mayWriteNow) = sim.beginUpdate("new")
        #expect(!mayWriteNow)
        let waiter = sim.request(.refresh)
        if flightReturnedFirst { sim.completeFetch(1, with: .success("f1")) }
        sim.finishUpdate(clear)
        #expect(sim.log.cancelled == [])
        #expect(sim.log.granted == ["U\(update)"])
        #expect(sim.status == .loading)
        sim.finishUpdate(update)
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.log.rejected == (flightReturnedFirst ? ["F1"] : []))
        #expect(sim.log.resolutions == [waiter ?? -1: .value("new")])
        sim.drain()
        #expect(sim.log.granted == ["U\(update)"])
        #expect(sim.log.emissions[MachineTest.s0] == [.loading("old"), .loading(nil), .completed("new")])
        #expect(sim.cache.value == "new")
        #expect(sim.status == .fixed)
        #expect(sim.violations == [])
    }

    /// Promise 7: when the update resolves the last waiter of a flight that is waiting for its write turn,
    /// nobody is left for that flight; it is not saving yet, so it must be cancelled and its write rejected,
    /// as a `leave` would do, instead of being granted the turn and overwriting the update.
    @Test(arguments: [false, true])
    func aFlightAwaitingItsWriteIsCancelledWhenTheUpdateResolvesItsLastWaiter(writeFails: Bool) {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        let (update, _) = sim.beginUpdate("new")
        let waiter = sim.request(.refresh)
        sim.completeFetch(1, with: .success("f1"))
        sim.finishUpdate(update, failing: writeFails)
        #expect(sim.log.resolutions == [waiter ?? -1: writeFails ? .failure("write") : .value("new")])
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.log.rejected == ["F1"])
        #expect(sim.log.granted == [])
        #expect(sim.machine.flight == nil)
        sim.drain()
        #expect(sim.cache.value == (writeFails ? "cached" : "new"))
    }

    /// Promise 8 and `DataState.error`: when an update fails and its waiters leave the flight they had
    /// started with nobody else, nothing is in flight and the last cache write failed: the key must
    /// report (and remember) that error instead of `.fixed`.
    @Test
    func aFailedUpdateThatEndsTheLastFlightIsRemembered() {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        let (update, _) = sim.beginUpdate("new")
        _ = sim.request(.refresh)
        sim.finishUpdate(update, failing: true)
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.machine.flight == nil)
        #expect(sim.status == .error("write"))
        #expect(!sim.machine.isIdle)
    }

    /// How a flight that outlived a failed update ends.
    enum FlightFate: CaseIterable, Sendable {
        case saved, fetchFailed, abandoned
    }

    /// A failed update is remembered as the key's error even while a flight runs for a subscriber: the
    /// key reports loading while the flight runs, then the flight decides (a success forgets the error, a
    /// failure replaces it); if the subscriber leaves first, the write error is what the key remembers.
    @Test(arguments: FlightFate.allCases)
    func aFailedUpdateIsRememberedWhileAFlightRuns(fate: FlightFate) {
        var sim = MachineTest.Start.fixedSubscribed.build(cache: .valid)
        let (update, _) = sim.beginUpdate("new")
        let waiter = sim.request(.refresh)
        sim.finishUpdate(update, failing: true)
        #expect(sim.log.resolutions == [waiter ?? -1: .failure("write")])
        #expect(sim.machine.lastError.map(MachineTest.name(of:)) == "write")
        #expect(sim.status == .loading)
        switch fate {
        case .saved:
            sim.drain()
            #expect(sim.log.emissions[MachineTest.s0] == [.loading("old"), .loading("old"), .completed("f1")])
            #expect(sim.status == .fixed)
            #expect(sim.machine.lastError == nil)
        case .fetchFailed:
            sim.drain(.fetchFailure)
            #expect(sim.log.emissions[MachineTest.s0] == [.loading("old"), .loading("old"), .error("old", "fetch")])
            #expect(sim.status == .error("fetch"))
        case .abandoned:
            sim.detach(MachineTest.s0)
            #expect(sim.log.cancelled == ["F1"])
            sim.drain()
            #expect(sim.status == .error("write"))
            #expect(sim.machine.isIdleExceptForError)
        }
        #expect(sim.cache.value == (fate == .saved ? "f1" : "cached"))
        #expect(sim.violations == [])
    }

    @Test
    func aFailedUpdateWhileAFlightRunsForSubscribersLetsTheFlightDecide() {
        var sim = MachineTest.Start.fixedSubscribed.build(cache: .valid)
        let (update, _) = sim.beginUpdate("new")
        _ = sim.request(.refresh)
        sim.finishUpdate(update, failing: true)
        #expect(sim.log.emissions[MachineTest.s0] == [.loading("old"), .loading("old")])
        #expect(sim.status == .loading)
        sim.drain()
        #expect(sim.log.emissions[MachineTest.s0]?.last == .completed("f1"))
        #expect(sim.status == .fixed)
        #expect(sim.violations == [])
    }

    @Test
    func updatesAreNeverRejected() {
        var sim = MachineTest.Start.saving.build(cache: .none)
        for value in ["a", "b", "c"] { _ = sim.beginUpdate(value) }
        sim.drain()
        #expect(sim.log.rejected == [])
        #expect(sim.log.granted == ["U1", "U2", "U3"])
        #expect(sim.cache.value == "c")
        #expect(sim.violations == [])
    }
}
