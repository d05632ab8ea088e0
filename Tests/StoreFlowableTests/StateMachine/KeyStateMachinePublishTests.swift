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

    /// How a flight comes to exist while a subscriber reads the cache for its first state.
    enum FlightStart: CaseIterable, Sendable {
        /// It already ran when the subscriber attached.
        case beforeAttaching
        /// A caller starts it while the subscriber reads.
        case byACaller
        /// Another subscriber's read starts it while the subscriber reads.
        case byAnotherSubscriber
    }

    /// A subscriber attached during a flight receives nothing until its read is reported (not the
    /// flight's start), then exactly one `.loading` with what it read, then the flight's outcome.
    @Test(arguments: FlightStart.allCases, MachineTest.Outcome.allCases)
    func aSubscriberAttachedDuringAFlightSeesOneLoadingThenTheOutcome(
        _ start: FlightStart, outcome: MachineTest.Outcome
    ) {
        var sim = MachineTest.Start.fixed.build(cache: .stale)
        if start == .beforeAttaching { _ = sim.request(.refresh) }
        let subscriber = sim.attach()
        sim.readCache(subscriber)
        var other: Int?
        switch start {
        case .beforeAttaching: break
        case .byACaller: _ = sim.request(.refresh)
        case .byAnotherSubscriber: other = sim.publish()
        }
        #expect(sim.log.started == ["F1"])
        #expect(sim.status == .loading)
        #expect(sim.log.emissions[subscriber] == nil)
        sim.reportRead(subscriber)
        #expect(sim.log.emissions[subscriber] == [.loading("stale")])
        sim.drain(outcome)
        let seen: [MachineTest.Emitted] = [
            .loading("stale"), FlightEnd.fetching(outcome, value: "f1").state(content: "stale"),
        ]
        #expect(sim.log.emissions[subscriber] == seen)
        if let other { #expect(sim.log.emissions[other] == seen) }
        #expect(sim.log.started == ["F1"])
        #expect(sim.violations == [])
    }

    /// A cache write that completes while a subscriber reads the cache, making its read stale.
    enum Overtaking: CaseIterable, Sendable {
        /// `update("new")` completes.
        case update
        /// A caller's refresh fetches `"f1"` and saves it.
        case fetch
        /// A clear completes; the flight it starts for the reading subscriber still runs.
        case clearStillFetching
        /// `update("new")` completes, then a caller's refresh fails in the origin.
        case updateThenFailedFetch
    }

    /// A read overtaken by a completed write is stale: the subscriber's first state is the key's current
    /// state (loading if a flight runs, the remembered error, else the content), never what it read. Only
    /// `forceRefresh` with no flight running fetches, announcing `.loading` with the current content.
    @Test(arguments: Overtaking.allCases, [false, true])
    func aReadOvertakenByACompletedWriteGetsTheCurrentState(_ write: Overtaking, forceRefresh: Bool) {
        var sim = MachineTest.Start.fixed.build(cache: .stale)
        let subscriber = sim.attach()
        sim.readCache(subscriber)
        switch write {
        case .update:
            _ = sim.beginUpdate("new")
            sim.drain()
        case .fetch:
            _ = sim.request(.refresh)
            sim.drain()
        case .clearStillFetching:
            sim.finishUpdate(sim.beginUpdate(nil).index)
            #expect(sim.log.started == ["F1"])
        case .updateThenFailedFetch:
            sim.finishUpdate(sim.beginUpdate("new").index)
            _ = sim.request(.refresh)
            sim.completeFetch(1, with: .failure(.fetch))
        }
        #expect(sim.log.emissions[subscriber] == nil)
        let startedBefore = sim.log.started
        sim.reportRead(subscriber, forceRefresh: forceRefresh)
        let (first, last): (MachineTest.Emitted, MachineTest.Emitted?) =
            switch (write, forceRefresh) {
            case (.update, false): (.completed("new"), nil)
            case (.fetch, false): (.completed("f1"), nil)
            case (.clearStillFetching, _): (.loading(nil), .completed("f1"))
            case (.updateThenFailedFetch, false): (.error("new", "fetch"), nil)
            case (.update, true): (.loading("new"), .completed("f1"))
            case (.fetch, true), (.updateThenFailedFetch, true): (.loading(sim.cache.value), .completed("f2"))
            }
        #expect(sim.log.emissions[subscriber] == [first])
        // A new flight only for forceRefresh with none running.
        let fetches = forceRefresh && write != .clearStillFetching
        #expect(sim.log.started.count == startedBefore.count + (fetches ? 1 : 0))
        sim.drain()
        #expect(sim.log.emissions[subscriber] == [first] + (last.map { [$0] } ?? []))
        #expect(sim.log.emissions[subscriber]?.contains { $0.content == "stale" } == false)
        #expect(sim.machine.content == sim.cache.value)
        #expect(sim.violations == [])
    }

    /// A read taken before a write and reported after it: while reading, the subscriber receives none of
    /// the write's broadcasts; then it gets the key's state once, and no fetch starts for its stale read.
    @Test(arguments: [false, true])
    func aReadReportedAfterAWriteCompletedGetsTheKeysStateOnce(writeIsAnUpdate: Bool) {
        var sim = MachineTest.Start.fixed.build(cache: .stale)
        let subscriber = sim.attach()
        sim.readCache(subscriber)
        if writeIsAnUpdate { _ = sim.beginUpdate("new") } else { _ = sim.request(.refresh) }
        sim.drain()
        // While it reads, the subscriber receives none of the write's broadcasts.
        #expect(sim.log.emissions[subscriber] == nil)
        sim.reportRead(subscriber)
        // The stale read reaches the machine after the write: the key's state, and no (second) fetch.
        #expect(sim.log.emissions[subscriber] == [.completed(writeIsAnUpdate ? "new" : "f1")])
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

    // MARK: Subscribers still reading

    /// A subscriber still reading its first state wants the key's flight: the last caller leaving does not
    /// cancel it; the subscriber gets the flight's loading from its read, then the outcome.
    @Test
    func aSubscriberStillReadingKeepsAFlightAlive() {
        var sim = MachineTest.Start.fixed.build(cache: .stale)
        let subscriber = sim.attach()
        let waiter = sim.request(.refresh)
        if let waiter { sim.cancel(waiter) }
        #expect(sim.log.cancelled == [])
        #expect(sim.status == .loading)
        #expect(!sim.machine.isIdle)
        sim.reportRead(subscriber)
        sim.drain()
        #expect(sim.log.emissions[subscriber] == [.loading("stale"), .completed("f1")])
        #expect(sim.log.resolutions == [:])
        #expect(sim.violations == [])
    }

    /// When the last subscriber leaves before its read is reported, nobody wants the flight any more.
    @Test
    func theLastSubscriberLeavingBeforeItsReadCancelsTheFlight() {
        var sim = MachineTest.Start.fixed.build(cache: .stale)
        let subscriber = sim.attach()
        let waiter = sim.request(.refresh)
        if let waiter { sim.cancel(waiter) }
        sim.detach(subscriber)
        #expect(sim.log.cancelled == ["F1"])
        #expect(sim.status == .fixed)
        #expect(!sim.machine.isIdle)
        sim.drain()
        #expect(sim.log.emissions == [:])
        #expect(sim.cache.value == "stale")
        #expect(sim.machine.isIdle)
        #expect(sim.violations == [])
    }

    /// Promise 6 for subscribers still reading: a clear fetches for them without announcing it to them;
    /// their read, overtaken by the clear, yields the key's loading state with no content, then the value.
    @Test
    func aClearFetchesForSubscribersStillReading() {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        let subscriber = sim.attach()
        sim.readCache(subscriber)
        sim.finishUpdate(sim.beginUpdate(nil).index)
        #expect(sim.log.started == ["F1"])
        #expect(sim.status == .loading)
        #expect(sim.log.emissions[subscriber] == nil)
        sim.reportRead(subscriber)
        #expect(sim.log.emissions[subscriber] == [.loading(nil)])
        sim.drain()
        #expect(sim.log.emissions[subscriber] == [.loading(nil), .completed("f1")])
        #expect(sim.log.started == ["F1"])
        #expect(sim.cache.value == "f1")
        #expect(sim.machine.content == "f1")
        #expect(sim.violations == [])
    }

    /// The key keeps the content a write leaves while a subscriber reads, and forgets it once it leaves.
    @Test
    func contentIsKeptForSubscribersStillReading() {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        let subscriber = sim.attach()
        sim.finishUpdate(sim.beginUpdate("new").index)
        #expect(sim.machine.content == "new")
        #expect(sim.log.emissions[subscriber] == nil)
        #expect(!sim.machine.isIdle)
        sim.detach(subscriber)
        #expect(sim.machine.content == nil)
        #expect(sim.machine.isIdle)
        #expect(sim.violations == [])
    }

    /// The last subscriber with a first state leaving keeps the content for one still reading.
    @Test
    func contentOutlivesTheLastSubscriberWhileAnotherReads() {
        var sim = MachineTest.Start.fixedSubscribed.build(cache: .valid)
        let reading = sim.attach()
        sim.detach(MachineTest.s0)
        #expect(sim.machine.content == "old")
        sim.reportRead(reading)
        #expect(sim.log.emissions[reading] == [.completed("cached")])
        #expect(sim.machine.content == "cached")
        #expect(sim.violations == [])
    }

    /// A read overtaken by a clear whose fetch failed, the error then reset, finds nothing to show (no
    /// flight, no error, no content): the machine fetches, as for an empty cache, so the subscriber
    /// still gets a first state (`.loading(nil)`) and is not left without one.
    @Test
    func aReadOvertakenByAClearWhoseFailureWasResetStillGetsAFirstState() {
        var sim = MachineTest.Start.fixed.build(cache: .valid)
        let subscriber = sim.attach()
        sim.readCache(subscriber)
        sim.finishUpdate(sim.beginUpdate(nil).index)
        sim.completeFetch(1, with: .failure(.fetch))
        sim.clearError()
        sim.reportRead(subscriber)
        #expect(sim.log.emissions[subscriber] == [.loading(nil)])
        #expect(sim.machine.flight != nil)
        #expect(sim.status == .loading)
        #expect(sim.violations == [])
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
