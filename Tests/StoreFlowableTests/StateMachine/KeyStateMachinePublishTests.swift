import Testing

@testable import StoreFlowable

private typealias Sim = MachineTest.Sim
private typealias Snapshot = MachineTest.Snapshot
private typealias FlightEnd = MachineTest.FlightEnd

/// `publish()` as the machine sees it: `subscribe`, then `initialRead` with what the cache held.
@Suite("KeyStateMachine: publish")
struct KeyStateMachinePublishTests {
    /// One row of the publish transition table.
    struct Case: Sendable, CustomTestStringConvertible {
        let start: MachineTest.Start
        let cache: MachineTest.Cache
        let forceRefresh: Bool
        let outcome: MachineTest.Outcome

        var testDescription: String {
            "from \(start), cache \(cache), \(forceRefresh ? "forceRefresh" : "publish"), \(outcome)"
        }

        static let all: [Case] = MachineTest.Start.allCases.flatMap { start in
            MachineTest.Cache.allCases.flatMap { cache in
                [false, true].flatMap { forceRefresh in
                    MachineTest.Outcome.allCases.map {
                        Case(start: start, cache: cache, forceRefresh: forceRefresh, outcome: $0)
                    }
                }
            }
        }
    }

    @Test(arguments: Case.all)
    func publishFollowsTheTransitionTable(_ row: Case) {
        var sim = row.start.build(cache: row.cache)
        let subscriber = sim.publish(forceRefresh: row.forceRefresh)
        #expect(subscriber == MachineTest.s1)
        sim.drain(row.outcome)
        #expect(sim.violations == [])
        MachineTest.expectMatch(sim.snapshot, Self.expected(row))
    }

    /// What the promises say `publish()` does in `row`: S1 attaches, then all work in progress drains.
    private static func expected(_ row: Case) -> Snapshot {
        let (s0, s1, w0) = (MachineTest.s0, MachineTest.s1, MachineTest.w0)
        let read = row.cache.value
        var expected = Snapshot(cache: read)
        switch row.start {
        case .fixed, .fixedSubscribed, .failed:
            // Nothing runs: the read decides. An invalid cache or forceRefresh fetches for everyone.
            let audience = row.start == .fixed ? [s1] : [s0, s1]
            if row.forceRefresh || !row.cache.isValid {
                expected.log.started = ["F1"]
                for subscriber in audience { expected.log.emit(subscriber, .loading(read)) }
                expected.settle(.fetching(row.outcome, value: "f1"), audience: audience, content: read)
            } else if row.start == .failed {
                expected.log.emit(s1, .error("cached", "setup"))
                expected.status = .error("setup")
                expected.content = "cached"
            } else {
                expected.log.emit(s1, .completed("cached"))
                expected.content = "cached"
            }
        case .fetching:
            // S1 joins F0: it sees what it read as loading, then the flight's outcome.
            expected.log.emit(s1, .loading(read))
            expected.settle(.fetching(row.outcome, value: "f0"), audience: [s0, s1], waiters: [w0], content: read)
        case .awaitingWrite:
            // U0 writes: S1's read may be stale and is dropped (forceRefresh joins F0). U0 wins: F0, which
            // began while U0 wrote, is cancelled and its queued write rejected, so its outcome never matters;
            // W0 receives "u0" and both subscribers see it completed.
            expected.log.emit(s0, .completed("u0"))
            expected.log.emit(s1, .completed("u0"))
            expected.log.resolutions[w0] = .value("u0")
            expected.log.cancelled = ["F0"]
            expected.log.rejected = ["F0"]
            expected.cache = "u0"
            expected.content = "u0"
        case .awaitingWriteBehindClear:
            // The clear U0 writes: S1's read is dropped (forceRefresh joins F0). U0 keeps F0 for S0, S1 and
            // W0: everyone sees loading with no content, then F0 writes and its outcome reaches them all.
            expected.log.emit(s0, .loading(nil))
            expected.log.emit(s1, .loading(nil))
            expected.log.granted = ["F0"]
            expected.cache = nil
            expected.settle(.fetched(row.outcome, value: "f0"), audience: [s0, s1], waiters: [w0], content: nil)
        case .saving:
            // F0 writes: S1's read is dropped, but no write completed since S1 attached, so what it read is
            // the content a failed save reports; F0's outcome reaches both subscribers.
            expected.settle(.fetched(row.outcome, value: "f0"), audience: [s0, s1], waiters: [w0], content: read)
        }
        return expected
    }

    // MARK: The promises, one by one

    @Test
    func emptyCacheShowsLoadingWithoutContentThenCompleted() {
        var sim = MachineTest.Start.fixed.build(cache: .none)
        let subscriber = sim.publish()
        #expect(sim.status == .loading)
        sim.drain()
        #expect(sim.log.emissions[subscriber] == [.loading(nil), .completed("f1")])
        #expect(sim.log.started == ["F1"])
    }

    @Test
    func validCacheShowsExactlyOneCompletedAndDoesNotFetch() {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        let subscriber = sim.publish()
        #expect(sim.machine.flight == nil)
        sim.drain()
        #expect(sim.log.emissions[subscriber] == [.completed("cached")])
        #expect(sim.log.started == [])
        #expect(sim.status == .fixed)
    }

    @Test
    func staleCacheShowsLoadingWithTheStaleValueNeverCompletedStale() {
        var sim = MachineTest.Start.fixed.build(cache: .stale)
        let subscriber = sim.publish()
        #expect(sim.log.emissions[subscriber] == [.loading("stale")])
        sim.drain()
        #expect(sim.log.emissions[subscriber] == [.loading("stale"), .completed("f1")])
        #expect(sim.log.emissions[subscriber]?.contains(.completed("stale")) == false)
    }

    @Test
    func forceRefreshFetchesEvenWhenTheCacheIsValid() {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        let subscriber = sim.publish(forceRefresh: true)
        #expect(sim.log.started == ["F1"])
        sim.drain()
        #expect(sim.log.emissions[subscriber] == [.loading("cached"), .completed("f1")])
    }

    @Test(arguments: [1, 2, 5, 50])
    func subscribersArrivingDuringAFetchShareIt(count: Int) {
        var sim = MachineTest.Start.fixed.build(cache: .none)
        let subscribers = (0..<count).map { _ in sim.publish() }
        #expect(sim.log.started == ["F1"])
        sim.drain()
        for subscriber in subscribers {
            #expect(sim.log.emissions[subscriber] == [.loading(nil), .completed("f1")])
        }
        #expect(sim.violations == [])
    }

    @Test(arguments: [false, true])
    func aReadReportedAfterAWriteCompletedIsDropped(writeIsAnUpdate: Bool) {
        var sim = MachineTest.Start.fixed.build(cache: .stale)
        let subscriber = sim.attach()
        sim.readCache(subscriber)
        if writeIsAnUpdate { _ = sim.beginUpdate("new") } else { _ = sim.request(.refresh) }
        sim.drain()
        let seen: [MachineTest.Emitted] = writeIsAnUpdate ? [.completed("new")] : [.loading(nil), .completed("f1")]
        #expect(sim.log.emissions[subscriber] == seen)
        sim.reportRead(subscriber)
        // The stale read reaches the machine after the write: neither a state nor a (second) fetch.
        #expect(sim.log.emissions[subscriber] == seen)
        #expect(sim.log.started == (writeIsAnUpdate ? [] : ["F1"]))
        #expect(sim.machine.content == (writeIsAnUpdate ? "new" : "f1"))
        #expect(sim.violations == [])
    }

    @Test
    func aReadReportedWhileAnUpdateWritesWaitsForTheUpdatesState() {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        _ = sim.beginUpdate("new")
        let subscriber = sim.publish()
        #expect(sim.log.emissions[subscriber] == nil)
        sim.drain()
        #expect(sim.log.emissions[subscriber] == [.completed("new")])
        #expect(sim.log.started == [])
    }

    /// forceRefresh while an update writes still starts a flight, from what the subscriber read; but that
    /// flight began during the update, which wins when it finishes (promise 5): the flight is cancelled
    /// (its queued write rejected if it had returned) and the subscriber ends on the update's value.
    @Test(arguments: [false, true])
    func forceRefreshWhileAnUpdateWritesStartsAFlightTheUpdateSupersedes(flightReturnedFirst: Bool) {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        let (update, _) = sim.beginUpdate("new")
        let subscriber = sim.publish(forceRefresh: true)
        #expect(sim.log.started == ["F1"])
        #expect(sim.status == .loading)
        if flightReturnedFirst { sim.completeFetch(1, with: .success("f1")) }
        sim.finishUpdate(update)
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.log.rejected == (flightReturnedFirst ? ["F1"] : []))
        #expect(sim.status == .fixed)
        sim.drain()
        #expect(sim.log.emissions[subscriber] == [.loading("cached"), .completed("new")])
        #expect(sim.log.granted == [])
        #expect(sim.cache.value == "new")
        #expect(sim.machine.content == "new")
        #expect(sim.violations == [])
    }

    /// forceRefresh while a clear writes: the flight it starts is wanted after the clear, which shows
    /// loading with no content and lets the flight write (promises 3 and 6).
    @Test(arguments: [false, true])
    func forceRefreshWhileAClearWritesFetchesAfterIt(flightReturnedFirst: Bool) {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        let (update, _) = sim.beginUpdate(nil)
        let subscriber = sim.publish(forceRefresh: true)
        #expect(sim.log.started == ["F1"])
        if flightReturnedFirst { sim.completeFetch(1, with: .success("f1")) }
        sim.finishUpdate(update)
        #expect(sim.log.cancelled == [])
        #expect(sim.log.granted == (flightReturnedFirst ? ["F1"] : []))
        #expect(sim.status == .loading)
        sim.drain()
        #expect(sim.log.emissions[subscriber] == [.loading("cached"), .loading(nil), .completed("f1")])
        #expect(sim.log.started == ["F1"])
        #expect(sim.cache.value == "f1")
        #expect(sim.machine.content == "f1")
        #expect(sim.violations == [])
    }

    /// A read dropped because a write was in progress still saw the cache that a failed write leaves
    /// unchanged, so the error must carry it (promises 4 and 8: a failure keeps the last content).
    @Test(arguments: [true, false])
    func aFailedWriteKeepsTheContentOfARead(writeIsAnUpdate: Bool) {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        if writeIsAnUpdate {
            _ = sim.beginUpdate("new")
        } else {
            _ = sim.request(.refresh)
            sim.completeFetch(1, with: .success("f1"))
        }
        let subscriber = sim.publish()
        if writeIsAnUpdate { sim.finishUpdate(1, failing: true) } else { sim.completeSave(1, failing: true) }
        let error = writeIsAnUpdate ? "write" : "save"
        #expect(sim.log.emissions[subscriber] == [.error("cached", error)])
        #expect(sim.machine.content == "cached")
        #expect(sim.status == .error(error))
    }

    @Test
    func aSubscriberGoneBeforeItsReadCausesNothing() {
        var machine = MachineTest.Machine()
        let (id, version) = machine.subscribe(1)
        #expect(machine.unsubscribe(id).isEmpty)
        let action = machine.initialRead(
            subscriber: id, version: version, cached: nil, isValid: false, forceRefresh: true)
        #expect(action.isEmpty)
        #expect(machine.isIdle)
    }

    @Test
    func aRememberedErrorWithAValidCacheIsShownToTheNewSubscriberOnly() {
        var sim = MachineTest.Start.failed.build(cache: .valid)
        let subscriber = sim.publish()
        #expect(sim.log.emissions == [subscriber: [.error("cached", "setup")]])
        #expect(sim.log.started == [])
        #expect(sim.status == .error("setup"))
    }
}
