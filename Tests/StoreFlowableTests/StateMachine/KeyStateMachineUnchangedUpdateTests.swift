import Testing

@testable import StoreFlowable

/// `finishUpdateUnchanged`: an update whose transform (or read) threw writes nothing; the key keeps
/// its state, and a flight the update dropped starts again for whoever it was fetching for.
@Suite("KeyStateMachine: an update that writes nothing")
struct KeyStateMachineUnchangedUpdateTests {
    private typealias Machine = KeyStateMachine<String, Int, Int, Int, Int>

    @Test func aDroppedFlightStartsAgainForItsWaiters() {
        var machine = Machine()
        let (_, joined) = machine.join(1)
        #expect(joined.startFlight != nil)
        let (update, mayWriteNow, begun) = machine.beginUpdate(100)
        #expect(mayWriteNow && begun.cancelFlight != nil && machine.flight == nil)
        let finished = machine.finishUpdateUnchanged(update)
        #expect(machine.flight != nil)
        #expect(machine.writeOwner == nil && machine.waiters.count == 1)
        // The first flight drains: the new one waits for its origin call to return.
        #expect(finished.startFlight == nil && machine.flight?.phase == .pending)
    }

    @Test func withoutADroppedFlightNothingStartsAndNothingIsEmitted() {
        var machine = Machine()
        let (id, version) = machine.subscribe(7)
        _ = machine.initialRead(subscriber: id, version: version, cached: "valid", isValid: true, forceRefresh: false)
        let (update, _, _) = machine.beginUpdate(100)
        let finished = machine.finishUpdateUnchanged(update)
        #expect(finished.isEmpty)
        #expect(machine.flight == nil && machine.writeOwner == nil && !machine.status.isLoading)
        #expect(machine.content == "valid")
    }

    @Test func theWriteTurnPassesToTheNextWriter() {
        var machine = Machine()
        let (first, _, _) = machine.beginUpdate(100)
        let (_, secondMayWrite, _) = machine.beginUpdate(101)
        #expect(!secondMayWrite)
        let finished = machine.finishUpdateUnchanged(first)
        #expect(finished.grantWriter == 101)
        #expect(machine.isIdle == false)
    }

    @Test func aFailedStateStaysFailed() throws {
        var machine = Machine()
        _ = machine.join(1)
        let flight = try #require(machine.flight?.id)
        _ = machine.flightFailed(flight, error: TestError("down"))
        let (update, _, _) = machine.beginUpdate(100)
        _ = machine.finishUpdateUnchanged(update)
        guard case .error = machine.status else {
            Issue.record("expected the remembered error to stay, got \(machine.status)")
            return
        }
    }
}
