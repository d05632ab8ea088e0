import Testing

@testable import StoreFlowable

/// The pure machine under every controller: only the current work writes.
@Suite("WorkSlot")
struct WorkSlotTests {
    private typealias Slot = WorkSlot<LoadableState<String>>

    @Test func startShowsProgressAndTheCurrentWorkWritesItsEnd() {
        var slot = Slot(.absent)
        let (id, outcome) = slot.start(showing: .loading)
        #expect(outcome.stopped == nil)
        #expect(outcome.changed)
        #expect(slot.state == .loading)
        let wrote1 = slot.write(.loaded("partial"), from: id)
        #expect(wrote1)
        let wrote2 = slot.finish(id, with: .loaded("done"))
        #expect(wrote2)
        #expect(slot.state == .loaded("done"))
        #expect(slot.current == nil)
    }

    @Test func aSupersededWorkNeverWritesNorEnds() {
        var slot = Slot(.loaded("old"))
        let (first, _) = slot.start(showing: .loading)
        let (second, outcome) = slot.start(showing: .loading)
        #expect(outcome.stopped == first)
        let wrote3 = slot.write(.loaded("late"), from: first)
        #expect(!wrote3)
        let wrote4 = slot.finish(first, with: .error(TestError("late")))
        #expect(!wrote4)
        #expect(slot.state == .loading)
        #expect(slot.isCurrent(second))
        // Cancelling the second restores what was there before the first.
        let cancelled = slot.cancel()
        #expect(cancelled.stopped == second)
        #expect(slot.state == .loaded("old"))
    }

    @Test func cancelRestoresOnlyAStateStillInProgress() {
        var slot = Slot(.absent)
        let (id, _) = slot.start(showing: .loading)
        let wrote5 = slot.write(.loaded("partial"), from: id)
        #expect(wrote5)
        let outcome = slot.cancel()
        #expect(outcome.stopped == id)
        #expect(!outcome.changed)
        #expect(slot.state == .loaded("partial"))
        #expect(slot.cancel().stopped == nil)
    }

    @Test func resetShowsTheInitialStateAndStopsTheWork() {
        var slot = Slot(.loaded("old"))
        let (id, _) = slot.start(showing: nil)
        #expect(slot.state == .loaded("old"))
        let outcome = slot.reset(to: .absent)
        #expect(outcome.stopped == id)
        #expect(slot.state == .absent)
        let wrote6 = slot.finish(id, with: .loaded("late"))
        #expect(!wrote6)
        #expect(slot.state == .absent)
    }

    @Test func aStreamThatEndsStillLoadingGoesBackToTheStateBeforeIt() {
        var slot = Slot(.loaded("old"))
        let (id, _) = slot.start(showing: .loading)
        let wrote7 = slot.finish(id, with: nil)
        #expect(wrote7)
        #expect(slot.state == .loaded("old"))
        let (next, _) = slot.start(showing: .loading)
        let wrote8 = slot.write(.loaded("new"), from: next)
        #expect(wrote8)
        let wrote9 = slot.finish(next, with: nil)
        #expect(!wrote9)
        #expect(slot.state == .loaded("new"))
    }

    @Test func eachChangeBumpsTheVersion() {
        var slot = Slot(.absent)
        let start = slot.version
        let (id, _) = slot.start(showing: .loading)
        _ = slot.write(.loaded("a"), from: id)
        _ = slot.write(.loaded("b"), from: 99)
        #expect(slot.version == start + 2)
    }
}
