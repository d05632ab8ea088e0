import Testing

@testable import StoreFlowable

/// The batcher's rules, on its state machine alone: waiters are strings, handles numbers.
@Suite("BatchState")
struct BatchStateTests {
    typealias State = BatchState<Int, String, Int>

    /// Numbers handles 1, 2, 3… in the order a transition asks for them.
    final class Handles {
        var made = 0
        func make() -> Int {
            made += 1
            return made
        }
    }

    @Test func theFirstKeyStartsOneWindowAndLaterKeysJoinIt() {
        var state = State(maxBatchSize: 10)
        let handles = Handles()
        let first = state.enqueue(1, waiter: "a", makeHandle: handles.make)
        #expect(first.effects.startWindow?.timer == 1)
        #expect(first.effects.dispatch == nil)
        let second = state.enqueue(2, waiter: "b", makeHandle: handles.make)
        #expect(second.effects.startWindow == nil)
        #expect(second.effects.cancel == nil)
        #expect(handles.made == 1)
        #expect(state.pendingKeyCount == 2)
        #expect(state.callerCount == 2)
    }

    @Test func theWindowsEndDispatchesTheKeysInArrivalOrder() {
        var state = State(maxBatchSize: 10)
        let handles = Handles()
        let batch = state.enqueue(3, waiter: "a", makeHandle: handles.make).effects.startWindow?.batch
        _ = state.enqueue(1, waiter: "b", makeHandle: handles.make)
        _ = state.enqueue(2, waiter: "c", makeHandle: handles.make)
        let dispatch = state.windowEnded(batch: batch ?? -1, makeHandle: handles.make).dispatch
        #expect(dispatch?.keys == [3, 1, 2])
        #expect(dispatch?.flight == 2)
        #expect(state.pendingKeyCount == 0)
        #expect(state.runningBatchCount == 1)
        // A timer that ends after its batch left the pending slot changes nothing.
        #expect(state.windowEnded(batch: batch ?? -1, makeHandle: handles.make).dispatch == nil)
    }

    @Test func aDuplicateKeyJoinsItsPendingEntryAndDoesNotCountTwice() {
        var state = State(maxBatchSize: 2)
        let handles = Handles()
        _ = state.enqueue(1, waiter: "a", makeHandle: handles.make)
        let again = state.enqueue(1, waiter: "b", makeHandle: handles.make)
        #expect(again.effects.dispatch == nil)
        #expect(state.pendingKeyCount == 1)
        let full = state.enqueue(2, waiter: "c", makeHandle: handles.make)
        #expect(full.effects.dispatch?.keys == [1, 2])
        #expect(full.effects.cancel == 1, "the window timer of a batch dispatched by size is cancelled")
        let served = state.finish(batch: full.effects.dispatch?.batch ?? -1)
        let waiters = Dictionary(uniqueKeysWithValues: served.map { ($0.key, Set($0.waiters)) })
        #expect(waiters == [1: ["a", "b"], 2: ["c"]])
        #expect(state.callerCount == 0)
    }

    @Test func aFullBatchIsDispatchedAtOnceAndTheNextKeyStartsANewWindow() {
        var state = State(maxBatchSize: 2)
        let handles = Handles()
        _ = state.enqueue(1, waiter: "a", makeHandle: handles.make)
        _ = state.enqueue(2, waiter: "b", makeHandle: handles.make)
        let next = state.enqueue(3, waiter: "c", makeHandle: handles.make)
        #expect(next.effects.startWindow != nil)
        #expect(state.pendingKeyCount == 1)
        #expect(state.runningBatchCount == 1)
    }

    @Test func sizesBelowOneCountAsOneAndNeedNoWindow() {
        var state = State(maxBatchSize: 0)
        let handles = Handles()
        let effects = state.enqueue(1, waiter: "a", makeHandle: handles.make).effects
        #expect(state.maxBatchSize == 1)
        #expect(effects.startWindow == nil)
        #expect(effects.cancel == nil)
        #expect(effects.dispatch?.keys == [1])
        #expect(handles.made == 1)
    }

    @Test func aKeyWhosePendingCallersAllLeftIsDropped() {
        var state = State(maxBatchSize: 10)
        let handles = Handles()
        let batch = state.enqueue(1, waiter: "a", makeHandle: handles.make).effects.startWindow?.batch ?? -1
        let leaving = state.enqueue(2, waiter: "b", makeHandle: handles.make).caller
        _ = state.enqueue(2, waiter: "c", makeHandle: handles.make)
        let gone = state.enqueue(3, waiter: "d", makeHandle: handles.make).caller
        #expect(state.leave(caller: leaving).cancel == nil)
        #expect(state.leave(caller: gone).cancel == nil)
        #expect(state.pendingKeyCount == 2)
        #expect(state.windowEnded(batch: batch, makeHandle: handles.make).dispatch?.keys == [1, 2])
    }

    @Test func aPendingBatchLeftEmptyIsDiscardedWithItsTimer() {
        var state = State(maxBatchSize: 10)
        let handles = Handles()
        let first = state.enqueue(1, waiter: "a", makeHandle: handles.make)
        let second = state.enqueue(2, waiter: "b", makeHandle: handles.make)
        #expect(state.leave(caller: first.caller).cancel == nil)
        #expect(state.leave(caller: second.caller).cancel == first.effects.startWindow?.timer)
        #expect(state.pendingKeyCount == 0)
        #expect(state.callerCount == 0)
        let batch = first.effects.startWindow?.batch ?? -1
        #expect(state.windowEnded(batch: batch, makeHandle: handles.make).dispatch == nil)
        // Leaving twice, or after being served, changes nothing.
        #expect(state.leave(caller: second.caller).cancel == nil)
    }

    @Test func aRunningBatchIsDiscardedAndItsCallCancelledWhenAllItsCallersLeft() {
        var state = State(maxBatchSize: 10)
        let handles = Handles()
        let first = state.enqueue(1, waiter: "a", makeHandle: handles.make)
        let second = state.enqueue(2, waiter: "b", makeHandle: handles.make)
        let batch = first.effects.startWindow?.batch ?? -1
        let flight = state.windowEnded(batch: batch, makeHandle: handles.make).dispatch?.flight
        #expect(state.leave(caller: first.caller).cancel == nil, "key 2 still waits")
        #expect(state.runningBatchCount == 1)
        #expect(state.leave(caller: second.caller).cancel == flight)
        #expect(state.runningBatchCount == 0)
        #expect(state.finish(batch: batch).isEmpty, "a discarded batch's late outcome reaches nobody")
        #expect(state.enqueue(1, waiter: "d", makeHandle: handles.make).effects.startWindow != nil)
    }

    @Test func aLoadAfterItsKeysBatchWasSentGoesToANewBatch() {
        var state = State(maxBatchSize: 10)
        let handles = Handles()
        let first = state.enqueue(1, waiter: "a", makeHandle: handles.make)
        let batch = first.effects.startWindow?.batch ?? -1
        let flight = state.windowEnded(batch: batch, makeHandle: handles.make).dispatch?.flight
        // The sent call may have read the origin before whatever the late caller follows: it is not joined.
        let late = state.enqueue(1, waiter: "b", makeHandle: handles.make)
        let lateBatch = late.effects.startWindow?.batch
        #expect(lateBatch != nil && lateBatch != batch)
        #expect(state.pendingKeyCount == 1)
        #expect(state.runningBatchCount == 1)
        let served = state.finish(batch: batch)
        #expect(served.count == 1 && served.first?.key == 1 && served.first?.waiters == ["a"])
        #expect(state.callerCount == 1, "the late caller waits for its own batch")
        let second = state.windowEnded(batch: lateBatch ?? -1, makeHandle: handles.make).dispatch
        #expect(second?.keys == [1])
        #expect(second?.flight != flight)
        #expect(state.finish(batch: lateBatch ?? -1).first?.waiters == ["b"])
        #expect(state.callerCount == 0)
    }

    @Test func finishReturnsOnlyKeysThatStillHaveCallers() {
        var state = State(maxBatchSize: 10)
        let handles = Handles()
        let first = state.enqueue(1, waiter: "a", makeHandle: handles.make)
        let second = state.enqueue(2, waiter: "b", makeHandle: handles.make)
        let batch = first.effects.startWindow?.batch ?? -1
        _ = state.windowEnded(batch: batch, makeHandle: handles.make)
        _ = state.leave(caller: second.caller)
        let served = state.finish(batch: batch)
        #expect(served.map(\.key) == [1])
        #expect(state.runningBatchCount == 0)
        #expect(state.callerCount == 0)
    }
}
