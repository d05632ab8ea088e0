import Testing

@testable import StoreFlowable

/// A reload after a change made outside the manager (`beginReload`/`finishReload`), transition by
/// transition.
@Suite("KeyStateMachine: reload from the cache")
struct KeyStateMachineReloadTests {
    typealias Machine = MachineTest.Machine

    /// A machine with one subscriber whose first read found `content` valid.
    func subscribed(content: String = "v") -> Machine { MachineTest.subscribed(content: content) }

    func emitted(_ action: Machine.Action) -> MachineTest.Emitted? { MachineTest.emitted(action) }

    @Test func aFreshValueReadIsEverySubscribersStateWithoutAFetch() {
        var machine = subscribed(content: "old")
        let (id, mayReadNow, mustMark, begin) = machine.beginReload(7)
        #expect(mayReadNow)
        #expect(!mustMark)
        #expect(begin.isEmpty)
        let finish = machine.finishReload(id, cached: "remote", isFresh: true)
        #expect(emitted(finish) == .completed("remote"))
        #expect(finish.startFlight == nil)
        #expect(machine.content == "remote")
        #expect(machine.writeOwner == nil)
    }

    @Test func nothingFreshStartsAFetchAndShowsWhatTheCacheHolds() {
        var machine = subscribed(content: "old")
        let (id, _, _, _) = machine.beginReload(7)
        let finish = machine.finishReload(id, cached: "stale", isFresh: false)
        #expect(finish.startFlight != nil)
        #expect(emitted(finish) == .loading("stale"))

        var empty = subscribed(content: "old")
        let (second, _, _, _) = empty.beginReload(7)
        let emptied = empty.finishReload(second, cached: nil, isFresh: false)
        #expect(emptied.startFlight != nil)
        #expect(emitted(emptied) == .loading(nil))
    }

    @Test func aFetchNotYetWritingIsDroppedAndItsCallersGetTheFreshValue() throws {
        var machine = Machine()
        let (waiter, join) = machine.join(MachineTest.w1)
        let flight = try #require(join.startFlight)
        let (id, mayReadNow, mustMark, begin) = machine.beginReload(7)
        #expect(mayReadNow)
        #expect(!mustMark)
        #expect(begin.cancelFlight == flight)
        #expect(machine.flight == nil)
        let finish = machine.finishReload(id, cached: "remote", isFresh: true)
        #expect(finish.resolution.map { Array($0.waiters.keys) } == [waiter])
        if case .success(let value)? = finish.resolution?.outcome {
            #expect(value == "remote")
        } else {
            Issue.record("the waiter was not given the reloaded value")
        }
        // The dropped flight's origin call still drains; its value is never written.
        #expect(machine.flightReturned(flight, writer: 1).decision == .discard)
        #expect(machine.isIdle)
    }

    @Test func callersOfADroppedFetchGetANewFetchWhenNothingFreshIsCached() throws {
        var machine = Machine()
        let (_, join) = machine.join(MachineTest.w1)
        let flight = try #require(join.startFlight)
        let (id, _, _, _) = machine.beginReload(7)
        let finish = machine.finishReload(id, cached: nil, isFresh: false)
        #expect(finish.resolution == nil)
        // The new flight waits for the dropped one's origin call: at most one call at a time.
        #expect(finish.startFlight == nil)
        #expect(machine.flight?.phase == .pending)
        let (_, drained) = machine.flightReturned(flight, writer: 1)
        #expect(drained.startFlight != nil)
    }

    @Test func aFetchAlreadyWritingWritesFirstAndTheReloadMustMarkItStale() throws {
        var machine = subscribed()
        let flight = try #require(machine.startFlightIfNeeded().startFlight)
        #expect(machine.flightReturned(flight, writer: 1).decision == .write)
        let (id, mayReadNow, mustMark, begin) = machine.beginReload(7)
        #expect(!mayReadNow)
        #expect(mustMark)
        #expect(begin.cancelFlight == nil)
        let saved = machine.flightSaved(flight, data: "fetched")
        #expect(saved.grantWriter == 7)
        #expect(machine.isWriteOwner(.reload(id)))
        let finish = machine.finishReload(id, cached: "fetched", isFresh: false)
        #expect(finish.startFlight != nil)
    }

    @Test func aReloadQueuedBehindAnUpdateNeedsNoMark() {
        var machine = subscribed()
        let (update, _, _) = machine.beginUpdate(1)
        let (id, mayReadNow, mustMark, _) = machine.beginReload(7)
        #expect(!mayReadNow)
        #expect(!mustMark)
        let finished = machine.finishUpdate(update, newData: "local", error: nil)
        #expect(finished.grantWriter == 7)
        let finish = machine.finishReload(id, cached: "local", isFresh: true)
        #expect(emitted(finish) == .completed("local"))
    }

    @Test func aFreshValueClearsTheRememberedErrorAndReleasesTheKey() throws {
        var machine = Machine()
        let (waiter, join) = machine.join(MachineTest.w1)
        let flight = try #require(join.startFlight)
        _ = machine.flightFailed(flight, error: MachineTest.Failure.fetch)
        _ = machine.leave(waiter)
        #expect(machine.isIdleExceptForError)
        let (id, _, _, _) = machine.beginReload(7)
        _ = machine.finishReload(id, cached: "remote", isFresh: true)
        if case .fixed = machine.status {} else { Issue.record("the error outlived the reload") }
        #expect(machine.isIdle)
    }

    @Test func aStaleReadKeepsTheErrorAndFetchesOnlyForSomeone() throws {
        var machine = Machine()
        let (waiter, join) = machine.join(MachineTest.w1)
        let flight = try #require(join.startFlight)
        _ = machine.flightFailed(flight, error: MachineTest.Failure.fetch)
        _ = machine.leave(waiter)
        let (id, _, _, _) = machine.beginReload(7)
        let finish = machine.finishReload(id, cached: "stale", isFresh: false)
        #expect(finish.isEmpty)
        #expect(machine.isIdleExceptForError)
    }

    @Test func aFlightStartedDuringTheReloadIsKeptAndItsCallersWaitForIt() throws {
        var machine = subscribed()
        let (update, _, _) = machine.beginUpdate(1)
        let (id, _, _, _) = machine.beginReload(7)
        _ = machine.finishUpdate(update, newData: nil, error: nil)
        // The `nil` update started a flight for the subscriber; the reload then reads a fresh value.
        let flight = try #require(machine.flight?.id)
        let (waiter, _) = machine.join(MachineTest.w1)
        let finish = machine.finishReload(id, cached: "remote", isFresh: true)
        #expect(finish.resolution == nil)
        #expect(machine.flight?.id == flight)
        #expect(emitted(finish) == .loading("remote"))
        #expect(machine.waiters.keys.contains(waiter))
    }

    @Test func aSubscriberReadingDuringTheReloadGetsTheReloadedState() {
        var machine = subscribed(content: "old")
        let (id, _, _, _) = machine.beginReload(7)
        let (late, version) = machine.subscribe(MachineTest.s0)
        // Its read found the old value (before the change): the reload's outcome is its first state.
        let first = machine.initialRead(
            subscriber: late, version: version, cached: "old", isValid: true, forceRefresh: false)
        #expect(first.isEmpty)
        let finish = machine.finishReload(id, cached: "remote", isFresh: true)
        #expect(emitted(finish) == .completed("remote"))
        if case .all(let recipients)? = finish.emission?.to {
            #expect(recipients.count == 2)
        } else {
            Issue.record("the reload did not tell every subscriber")
        }
    }

    @Test func pageFlightsAreDroppedAndTheirErrorsForgotten() throws {
        var machine = subscribed()
        let (begin, _) = machine.requestPage(.next, waiter: 1, continueWhenError: true)
        #expect(begin != nil)
        let (_, _, _, action) = machine.beginReload(7)
        #expect(action.cancelPages.count == 1)
        #expect(machine.nextPage.flight == nil)
    }
}
