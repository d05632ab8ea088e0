import Testing

@testable import StoreFlowable

/// Background revalidation (`revalidate`) and invalidation (`beginInvalidation`/`finishInvalidation`),
/// transition by transition.
@Suite("KeyStateMachine: revalidation and invalidation")
struct KeyStateMachineFreshnessTests {
    typealias Machine = MachineTest.Machine

    /// A machine with one subscriber whose first read found `content` valid.
    func subscribed(content: String = "v") -> Machine { MachineTest.subscribed(content: content) }

    func emitted(_ action: Machine.Action) -> MachineTest.Emitted? { MachineTest.emitted(action) }

    // MARK: revalidate

    @Test func revalidateStartsAPinnedFlightThatNobodyLeavingCancels() {
        var machine = Machine()
        let start = machine.revalidate()
        #expect(start.startFlight != nil)
        #expect(machine.isFlightPinned)
        let (waiter, _) = machine.join(MachineTest.w1)
        let leave = machine.leave(waiter)
        #expect(leave.cancelFlight == nil)
        #expect(machine.flight != nil)
    }

    @Test func revalidatePinsARunningFlightInsteadOfStartingAnother() {
        var machine = Machine()
        let (waiter, join) = machine.join(MachineTest.w1)
        let flight = join.startFlight
        let again = machine.revalidate()
        #expect(again.startFlight == nil)
        #expect(machine.flight?.id == flight)
        #expect(machine.leave(waiter).cancelFlight == nil)
    }

    @Test func aPinnedFlightEndsLikeAnyOtherAndLeavesTheKeyIdle() throws {
        var machine = Machine()
        let id = try #require(machine.revalidate().startFlight)
        let (decision, _) = machine.flightReturned(id, writer: 1)
        #expect(decision == .write)
        _ = machine.flightSaved(id, data: "new")
        #expect(machine.isIdle)
        #expect(!machine.isFlightPinned)
    }

    @Test func anUpdateStillSupersedesAPinnedFlight() {
        var machine = Machine()
        _ = machine.revalidate()
        let (_, _, action) = machine.beginUpdate(1)
        #expect(action.cancelFlight != nil)
        #expect(machine.flight == nil)
    }

    @Test func unpinnedFlightsAreStillAbandoned() {
        var machine = Machine()
        let (waiter, _) = machine.join(MachineTest.w1)
        #expect(machine.leave(waiter).cancelFlight != nil)
    }

    // MARK: invalidation

    @Test func invalidatingAnUnwatchedKeyMarksAndFetchesNothing() {
        var machine = Machine()
        let (id, mayWriteNow, begin) = machine.beginInvalidation(7)
        #expect(mayWriteNow)
        #expect(begin.isEmpty)
        let finish = machine.finishInvalidation(id)
        #expect(finish.isEmpty)
        #expect(machine.isIdle)
    }

    @Test func subscribersGetARefetchAndKeepTheirContentAfterTheMark() {
        var machine = subscribed()
        let (id, _, begin) = machine.beginInvalidation(7)
        #expect(begin.isEmpty)  // nothing is fetched before the mark is written
        let finish = machine.finishInvalidation(id)
        #expect(finish.startFlight != nil)
        #expect(emitted(finish) == .loading("v"))
    }

    @Test func aFlightStillFetchingIsDroppedAndStartedAgainForItsWaiters() throws {
        var machine = Machine()
        let (_, join) = machine.join(MachineTest.w1)
        let old = try #require(join.startFlight)
        let (id, mayWriteNow, begin) = machine.beginInvalidation(7)
        #expect(mayWriteNow)
        #expect(begin.cancelFlight == old)
        // The new flight waits for the dropped origin call to return.
        #expect(machine.draining == old)
        #expect(machine.flight?.phase == .pending)
        let drained = machine.flightFailed(old, error: MachineTest.Failure.cancelled)
        let new = try #require(drained.startFlight)
        #expect(new != old)
        // It returns while the invalidation still marks: it writes after the mark.
        let (decision, _) = machine.flightReturned(new, writer: 8)
        #expect(decision == .waitForTurn)
        let finish = machine.finishInvalidation(id)
        #expect(finish.grantWriter == 8)
        #expect(finish.startFlight == nil)
    }

    @Test func aFlightAwaitingItsWriteTurnIsRejected() throws {
        var machine = Machine()
        let (_, join) = machine.join(MachineTest.w1)
        let flight = try #require(join.startFlight)
        _ = machine.beginUpdate(1)  // holds the turn; the flight is superseded by it
        _ = machine.flightFailed(flight, error: MachineTest.Failure.cancelled)
        let (_, join2) = machine.join(MachineTest.waiter(2))
        let second = try #require(join2.startFlight)
        let (decision, _) = machine.flightReturned(second, writer: 9)
        #expect(decision == .waitForTurn)
        let (_, mayWriteNow, begin) = machine.beginInvalidation(7)
        #expect(!mayWriteNow)
        #expect(begin.rejectWriter == 9)
        #expect(begin.cancelFlight == second)
        // Its waiter is not left behind: a new flight is started for it.
        #expect(machine.flight != nil && machine.flight?.id != second)
    }

    @Test func aFlightAlreadySavingWritesFirstAndTheMarkFollows() throws {
        var machine = subscribed()
        let (_, join) = machine.join(MachineTest.w1)
        let flight = try #require(join.startFlight)
        #expect(machine.flightReturned(flight, writer: 8).decision == .write)
        let (id, mayWriteNow, begin) = machine.beginInvalidation(7)
        #expect(!mayWriteNow)
        #expect(begin.cancelFlight == nil)
        let saved = machine.flightSaved(flight, data: "new")
        #expect(saved.grantWriter == 7)
        #expect(saved.resolution?.waiters.count == 1)
        let finish = machine.finishInvalidation(id)
        #expect(finish.startFlight != nil)
        #expect(emitted(finish) == .loading("new"))
    }

    @Test func anUpdateQueuedBehindTheInvalidationWritesAfterTheMark() {
        var machine = Machine()
        let (id, _, _) = machine.beginInvalidation(7)
        let (_, mayWriteNow, _) = machine.beginUpdate(1)
        #expect(!mayWriteNow)
        #expect(machine.finishInvalidation(id).grantWriter == 1)
    }

    @Test func aSubscribersReadFromBeforeTheMarkStartsAsLoadingWithTheValue() {
        var machine = Machine()
        let (subscriber, version) = machine.subscribe(MachineTest.s1)
        let (id, _, _) = machine.beginInvalidation(7)
        let finish = machine.finishInvalidation(id)
        // The stream is attached (still reading), so the invalidation fetches for it.
        #expect(finish.startFlight != nil)
        // Its read found the value fresh before the mark: it is shown as loading, with the value.
        let read = machine.initialRead(
            subscriber: subscriber, version: version, cached: "v", isValid: true, forceRefresh: false)
        #expect(emitted(read) == .loading("v"))
    }

    // MARK: content expiry

    @Test func theContentsExpiryComesWithEachValueTheMachineKeeps() throws {
        var machine = Machine()
        let (subscriber, version) = machine.subscribe(MachineTest.s1)
        let read = CacheTime(nanosecondsSince1970: 100)
        _ = machine.initialRead(
            subscriber: subscriber, version: version, cached: "v", isValid: false, forceRefresh: false,
            usableUntil: read)
        #expect(machine.content == "v")
        #expect(machine.contentUsableUntil == read)
        let flight = try #require(machine.flight?.id)
        _ = machine.flightReturned(flight, writer: 1)
        let fetched = CacheTime(nanosecondsSince1970: 200)
        _ = machine.flightSaved(flight, data: "fetched", usableUntil: fetched)
        #expect(machine.contentUsableUntil == fetched)
        let (update, _, _) = machine.beginUpdate(2)
        let updated = CacheTime(nanosecondsSince1970: 300)
        _ = machine.finishUpdate(update, newData: "updated", error: nil, usableUntil: updated)
        #expect(machine.content == "updated")
        #expect(machine.contentUsableUntil == updated)
        // A value with no known expiry replaces the expiry too.
        let (again, _, _) = machine.beginUpdate(3)
        _ = machine.finishUpdate(again, newData: "for ever", error: nil)
        #expect(machine.contentUsableUntil == nil)
    }

    @Test func theExpiryIsForgottenWithTheContent() {
        var machine = Machine()
        let (subscriber, version) = machine.subscribe(MachineTest.s1)
        _ = machine.initialRead(
            subscriber: subscriber, version: version, cached: "v", isValid: true, forceRefresh: false,
            usableUntil: CacheTime(nanosecondsSince1970: 100))
        _ = machine.unsubscribe(subscriber)
        #expect(machine.content == nil)
        #expect(machine.contentUsableUntil == nil)
    }

    @Test func aFailedFetchOrAnEmptiedCacheKeepsNoExpiryWithoutContent() throws {
        var machine = Machine()
        let (subscriber, version) = machine.subscribe(MachineTest.s1)
        _ = machine.initialRead(
            subscriber: subscriber, version: version, cached: "v", isValid: true, forceRefresh: false,
            usableUntil: CacheTime(nanosecondsSince1970: 100))
        let (update, _, _) = machine.beginUpdate(2)
        _ = machine.finishUpdate(update, newData: nil, error: nil, usableUntil: CacheTime(nanosecondsSince1970: 300))
        #expect(machine.content == nil)
        #expect(machine.contentUsableUntil == nil)
    }

    @Test func aSubscriberWhoseReadWasOutdatedIsNeverShownContentPastItsExpiry() throws {
        var machine = Machine()
        let (first, firstVersion) = machine.subscribe(MachineTest.s1)
        _ = machine.initialRead(
            subscriber: first, version: firstVersion, cached: "v", isValid: true, forceRefresh: false,
            usableUntil: CacheTime(nanosecondsSince1970: 100))
        let (second, secondVersion) = machine.subscribe(MachineTest.s0)
        let (update, _, _) = machine.beginUpdate(2)
        _ = machine.finishUpdate(update, newData: "new", error: nil, usableUntil: CacheTime(nanosecondsSince1970: 200))
        // The second subscriber's read (from before the update) comes back after "new" expired.
        let late = machine.initialRead(
            subscriber: second, version: secondVersion, cached: "v", isValid: true, forceRefresh: false,
            usableUntil: CacheTime(nanosecondsSince1970: 100), now: CacheTime(nanosecondsSince1970: 250))
        #expect(late.startFlight != nil)
        #expect(emitted(late) == .loading(nil))
        #expect(machine.content == nil)
        // Before its expiry, the same late read shows the current value.
        var fresh = Machine()
        let (a, aVersion) = fresh.subscribe(MachineTest.s1)
        _ = fresh.initialRead(subscriber: a, version: aVersion, cached: "v", isValid: true, forceRefresh: false)
        let (b, bVersion) = fresh.subscribe(MachineTest.s0)
        let (u, _, _) = fresh.beginUpdate(2)
        _ = fresh.finishUpdate(u, newData: "new", error: nil, usableUntil: CacheTime(nanosecondsSince1970: 200))
        let onTime = fresh.initialRead(
            subscriber: b, version: bVersion, cached: "v", isValid: true, forceRefresh: false,
            now: CacheTime(nanosecondsSince1970: 150))
        #expect(emitted(onTime) == .completed("new"))
    }
}
