import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// The paging transitions of the pure state machine: single flight per direction, when a request is
/// turned away, what supersedes a page, draining, the shared write turn, and remembered page errors.
@Suite("KeyStateMachine: paging")
struct KeyStateMachinePagingTests {
    typealias Machine = MachineTest.Machine

    /// A machine whose subscriber `s` holds `content` with nothing running: the data is settled.
    static func settled(content: String = "a", subscriber s: Int = 100) -> Machine {
        var machine = Machine()
        let (id, version) = machine.subscribe(s)
        _ = machine.initialRead(subscriber: id, version: version, cached: content, isValid: true, forceRefresh: false)
        return machine
    }

    /// The snapshot of the state an action emits, if any.
    static func emitted(_ action: Machine.Action) -> StateSnapshot<String>? {
        action.emission.map { StateSnapshot($0.state) }
    }

    /// Starts a page flight in `direction` for waiter `waiter` and returns the flight's id.
    static func startPage(_ machine: inout Machine, _ direction: PageDirection, waiter: Int = 1) throws -> UInt64 {
        let (id, action) = machine.requestPage(direction, waiter: waiter, continueWhenError: true)
        #expect(id != nil)
        return try #require(action.startPages.first { $0.direction == direction }?.id)
    }

    @Test func aRequestStartsOnePageFlightAndLaterRequestsJoinIt() throws {
        var machine = Self.settled()
        let (first, started) = machine.requestPage(.next, waiter: 1, continueWhenError: true)
        #expect(first != nil)
        #expect(started.startPages.map(\.direction) == [.next])
        #expect(Self.emitted(started) == .completedPaging("a", next: .loading, prev: .noMoreData))
        let (second, joined) = machine.requestPage(.next, waiter: 2, continueWhenError: true)
        #expect(second != nil && second != first)
        #expect(joined.isEmpty)
        #expect(machine.nextPage.waiters.count == 2)
        // The other direction has its own flight, started at once.
        let (_, prev) = machine.requestPage(.prev, waiter: 3, continueWhenError: true)
        #expect(prev.startPages.map(\.direction) == [.prev])
        #expect(Self.emitted(prev) == .completedPaging("a", next: .loading, prev: .loading))
    }

    enum Unsettled: CaseIterable { case mainFlight, updateWriting, updateQueued, failedRefresh }

    @Test(arguments: Unsettled.allCases)
    func requestsAreTurnedAwayWhileTheDataIsNotSettled(_ unsettled: Unsettled) throws {
        var machine = Self.settled()
        switch unsettled {
        case .mainFlight:
            _ = machine.join(7)
        case .updateWriting:
            _ = machine.beginUpdate(7)
        case .updateQueued:
            let page = try Self.startPage(&machine, .prev, waiter: 9)
            #expect(machine.pageReturned(.prev, page, writer: 8).decision == .write)
            #expect(machine.beginUpdate(7).mayWriteNow == false)
        case .failedRefresh:
            let flight = try #require(machine.join(7).action.startFlight)
            _ = machine.flightFailed(flight, error: MachineTest.Failure.fetch)
        }
        let (id, action) = machine.requestPage(.next, waiter: 1, continueWhenError: true)
        #expect(id == nil)
        #expect(action.isEmpty)
        #expect(machine.nextPage.flight == nil && machine.nextPage.waiters.isEmpty)
    }

    @Test func withoutContinueWhenErrorAFailedDirectionKeepsItsError() throws {
        var machine = Self.settled()
        let flight = try Self.startPage(&machine, .next)
        let failed = machine.pageFailed(.next, flight, error: MachineTest.Failure.fetch)
        #expect(failed.releasePageWaiters == [1])
        #expect(
            Self.emitted(failed) == .completedPaging("a", next: .error("Failure(name: \"fetch\")"), prev: .noMoreData))
        let (id, action) = machine.requestPage(.next, waiter: 2, continueWhenError: false)
        #expect(id == nil && action.isEmpty)
        #expect(machine.nextPage.error as? MachineTest.Failure == .fetch)
        let (retry, retried) = machine.requestPage(.next, waiter: 3, continueWhenError: true)
        #expect(retry != nil && retried.startPages.count == 1)
        #expect(machine.nextPage.error == nil)
    }

    @Test func aPageFailureWithoutAnErrorMeansThereWasNothingToFetch() throws {
        var machine = Self.settled()
        let flight = try Self.startPage(&machine, .next)
        let ended = machine.pageFailed(.next, flight, error: nil)
        #expect(ended.releasePageWaiters == [1])
        #expect(Self.emitted(ended) == .completed("a"))
        #expect(machine.nextPage.error == nil && machine.nextPage.flight == nil)
    }

    @Test func aMainFlightSupersedesPagesThatHaveNotReachedTheCache() throws {
        var machine = Self.settled()
        let next = try Self.startPage(&machine, .next, waiter: 1)
        let prev = try Self.startPage(&machine, .prev, waiter: 2)
        #expect(machine.pageReturned(.prev, prev, writer: 50).decision == .write)
        // The next page waits for the previous page's write turn, then a refresh starts.
        let nextReturn = machine.pageReturned(.next, next, writer: 51)
        #expect(nextReturn.decision == .waitForTurn)
        let (_, refresh) = machine.join(7)
        // The next page, not written yet, is dropped; the previous page, writing, finishes.
        #expect(refresh.cancelPages.map(\.id) == [next])
        #expect(refresh.rejectPageWriters == [51])
        #expect(refresh.releasePageWaiters == [1])
        #expect(machine.nextPage.flight == nil)
        #expect(machine.prevPage.flight?.phase == .saving)
        let saved = machine.pageSaved(.prev, prev, data: "pa")
        #expect(Self.emitted(saved) == .loading("pa"))
        #expect(saved.grantWriter == nil)
    }

    @Test func anUpdateSupersedesAFetchingPageAndItsLateResultIsDiscarded() throws {
        var machine = Self.settled()
        let page = try Self.startPage(&machine, .next)
        let (_, mayWriteNow, update) = machine.beginUpdate(7)
        #expect(mayWriteNow)
        #expect(update.cancelPages.map(\.id) == [page])
        #expect(update.releasePageWaiters == [1])
        #expect(machine.nextPage.draining == page)
        let late = machine.pageReturned(.next, page, writer: 50)
        #expect(late.decision == .discard)
        #expect(machine.nextPage.draining == nil)
    }

    @Test func aPageBeingWrittenIsNotSupersededAndTheUpdateWritesAfterIt() throws {
        var machine = Self.settled()
        let page = try Self.startPage(&machine, .next)
        #expect(machine.pageReturned(.next, page, writer: 50).decision == .write)
        let (update, mayWriteNow, begun) = machine.beginUpdate(7)
        #expect(!mayWriteNow)
        #expect(begun.cancelPages.isEmpty && begun.releasePageWaiters.isEmpty)
        let saved = machine.pageSaved(.next, page, data: "ab")
        #expect(saved.grantWriter == 7)
        #expect(saved.releasePageWaiters == [1])
        let finished = machine.finishUpdate(update, newData: "u", error: nil)
        #expect(Self.emitted(finished) == .completed("u"))
    }

    @Test func aCancelledPageFlightDrainsBeforeTheNextOneStarts() throws {
        var machine = Machine()
        let first = try Self.startPage(&machine, .next, waiter: 1)
        let (waiter, _) = machine.requestPage(.next, waiter: 2, continueWhenError: true)
        #expect(machine.leavePage(.next, waiter: 1).isEmpty)
        let left = machine.leavePage(.next, waiter: try #require(waiter))
        #expect(left.cancelPages.map(\.id) == [first])
        #expect(machine.nextPage.draining == first)
        let (_, held) = machine.requestPage(.next, waiter: 3, continueWhenError: true)
        #expect(held.startPages.isEmpty)
        let second = try #require(machine.nextPage.flight)
        #expect(second.phase == .pending)
        let drained = machine.pageFailed(.next, first, error: MachineTest.Failure.cancelled)
        #expect(drained.startPages.map(\.id) == [second.id])
        #expect(drained.releasePageWaiters.isEmpty)
        #expect(machine.nextPage.flight?.phase == .fetching)
    }

    @Test func aPageWaiterLeavingKeepsTheFlightWhileAStreamWatches() throws {
        var machine = Self.settled()
        let (waiter, _) = machine.requestPage(.next, waiter: 1, continueWhenError: true)
        #expect(machine.leavePage(.next, waiter: try #require(waiter)).isEmpty)
        #expect(machine.nextPage.flight?.phase == .fetching)
        // The last stream leaving abandons the page nobody waits for.
        let id = try #require(machine.subscribers.keys.first)
        let left = machine.unsubscribe(id)
        #expect(left.cancelPages.map(\.direction) == [.next])
    }

    @Test func pagesTakeTurnsWithEachOtherToWrite() throws {
        var machine = Self.settled()
        let next = try Self.startPage(&machine, .next, waiter: 1)
        let prev = try Self.startPage(&machine, .prev, waiter: 2)
        #expect(machine.pageReturned(.next, next, writer: 50).decision == .write)
        #expect(machine.pageReturned(.prev, prev, writer: 51).decision == .waitForTurn)
        let versionBefore = machine.version
        let saved = machine.pageSaved(.next, next, data: "ab")
        #expect(saved.grantWriter == 51)
        #expect(machine.prevPage.flight?.phase == .saving)
        #expect(machine.version == versionBefore + 1)
        #expect(Self.emitted(saved) == .completedPaging("ab", next: .noMoreData, prev: .loading))
        let both = machine.pageSaved(.prev, prev, data: "zab")
        #expect(Self.emitted(both) == .completed("zab"))
        #expect(machine.content == "zab")
    }

    @Test func aRememberedPageErrorKeepsAnIdleKeyUntilClearedOrReplaced() throws {
        var machine = Machine()
        let page = try Self.startPage(&machine, .next)
        #expect(machine.pageReturned(.next, page, writer: 50).decision == .write)
        let failed = machine.pageSaveFailed(.next, page, error: MachineTest.Failure.save)
        #expect(failed.releasePageWaiters == [1])
        #expect(machine.isIdleExceptForError)
        machine.clearError()
        #expect(machine.isIdle)
        // A successful first-page fetch forgets page errors too.
        let again = try Self.startPage(&machine, .prev)
        _ = machine.pageFailed(.prev, again, error: MachineTest.Failure.fetch)
        let flight = try #require(machine.join(7).action.startFlight)
        #expect(machine.prevPage.error == nil)
        #expect(machine.flightReturned(flight, writer: 51).decision == .write)
        _ = machine.flightSaved(flight, data: "f")
        #expect(machine.isIdle)
    }

    @Test func aLateReportForAnOldPageFlightChangesNothing() throws {
        var machine = Self.settled()
        let old = try Self.startPage(&machine, .next)
        _ = machine.pageFailed(.next, old, error: nil)
        let current = try Self.startPage(&machine, .next, waiter: 2)
        #expect(machine.pageFailed(.next, old, error: MachineTest.Failure.fetch).isEmpty)
        #expect(machine.pageReturned(.next, old, writer: 50).decision == .discard)
        #expect(machine.nextPage.flight?.id == current)
        #expect(machine.nextPage.error == nil)
    }
}
