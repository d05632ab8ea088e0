import Testing

@testable import StoreFlowable

private typealias Sim = MachineTest.Sim

/// When a key can be released, what it remembers, and the shape of actions.
@Suite("KeyStateMachine: lifecycle")
struct KeyStateMachineLifecycleTests {
    @Test
    func aNewMachineIsIdleAndFixed() {
        let machine = MachineTest.Machine()
        #expect(machine.isIdle)
        #expect(MachineTest.Status(machine.status) == .fixed)
        #expect(machine.content == nil)
    }

    /// What keeps a key from being released (promise 9).
    enum Holder: CaseIterable, Sendable {
        case subscriber, waiter, savingFlight, writeOwnerAndQueue, rememberedError
    }

    @Test(arguments: Holder.allCases)
    func aKeyIsIdleOnlyOnceNothingHoldsIt(_ holder: Holder) {
        var sim = Sim()
        switch holder {
        case .subscriber:
            sim.cache = ("cached", true)
            let subscriber = sim.publish()
            #expect(!sim.machine.isIdle)
            sim.detach(subscriber)
        case .waiter:
            let waiter = sim.request(.origin)
            #expect(!sim.machine.isIdle)
            if let waiter { sim.cancel(waiter) }
        case .savingFlight:
            let waiter = sim.request(.origin)
            sim.completeFetch(0, with: .success("f0"))
            if let waiter { sim.cancel(waiter) }
            #expect(sim.machine.waiters.isEmpty)
            #expect(!sim.machine.isIdle)
            sim.completeSave(0)
        case .writeOwnerAndQueue:
            _ = sim.beginUpdate("a")
            _ = sim.beginUpdate("b")
            #expect(!sim.machine.isIdle)
            sim.finishUpdate(0)
            #expect(sim.machine.writeQueue.isEmpty)
            #expect(!sim.machine.isIdle)
            sim.finishUpdate(1)
        case .rememberedError:
            _ = sim.request(.origin)
            sim.completeFetch(0, with: .failure(.fetch))
            #expect(sim.machine.waiters.isEmpty)
            #expect(!sim.machine.isIdle)
            sim.clearError()
        }
        #expect(sim.machine.isIdle)
        #expect(sim.violations == [])
    }

    /// Promise 9: once every subscriber and waiter is gone and the writes are done, only an error keeps the key.
    @Test(arguments: MachineTest.Start.allCases, MachineTest.Outcome.allCases)
    func aKeyEveryoneLeftIsIdleUnlessItRemembersAnError(start: MachineTest.Start, outcome: MachineTest.Outcome) {
        var sim = start.build(cache: .stale)
        for subscriber in sim.subscriberIDs.keys.sorted() { sim.detach(subscriber) }
        for waiter in sim.waiterIDs.keys.sorted() { sim.cancel(waiter) }
        // A flight not yet saving is cancelled as soon as nobody is left (promise 7).
        #expect(sim.log.cancelled == (start == .fetching || start.isAwaitingWrite ? ["F0"] : []))
        #expect(sim.log.rejected == (start.isAwaitingWrite ? ["F0"] : []))
        sim.drain(outcome)
        let remembers = start == .failed || (start == .saving && outcome == .saveFailure)
        #expect(sim.machine.isIdle == !remembers)
        #expect(sim.machine.content == nil)
        #expect(sim.log.emissions.isEmpty)
        #expect(sim.log.resolutions.isEmpty)
        sim.clearError()
        #expect(sim.machine.isIdle)
        #expect(sim.violations == [])
    }

    @Test
    func contentIsKeptOnlyWhileSubscribersExist() {
        var sim = Sim()
        sim.cache = ("cached", true)
        let first = sim.publish()
        let second = sim.publish()
        #expect(sim.machine.content == "cached")
        sim.detach(first)
        #expect(sim.machine.content == "cached")
        sim.detach(second)
        #expect(sim.machine.content == nil)
    }

    @Test
    func clearingTheErrorKeepsSubscribersAndTheFlight() {
        var sim = MachineTest.Start.failed.build(cache: .valid)
        sim.clearError()
        #expect(sim.status == .fixed)
        #expect(sim.machine.subscribers.count == 1)
        _ = sim.request(.refresh)
        sim.clearError()
        #expect(sim.status == .loading)
        #expect(sim.machine.flight != nil)
    }

    /// Status is `.loading` exactly while a flight exists, in each of its phases (promise 3).
    @Test(arguments: [MachineTest.Start.fetching, .awaitingWrite, .awaitingWriteBehindClear, .saving])
    func statusIsLoadingWhileTheFlightExists(start: MachineTest.Start) {
        var sim = start.build(cache: .none)
        #expect(sim.status == .loading)
        #expect(sim.machine.flight?.id != nil)
        sim.drain()
        #expect(sim.machine.flight == nil)
        #expect(sim.status == .fixed)
    }

    @Test
    func unknownIDsAreIgnored() {
        var machine = MachineTest.Machine()
        #expect(machine.unsubscribe(42).isEmpty)
        #expect(machine.leave(42).isEmpty)
        #expect(machine.flightReturned(42, writer: 1) == .discard)
        #expect(machine.flightFailed(42, error: MachineTest.Failure.fetch).isEmpty)
        #expect(machine.isIdle)
    }

    @Test
    func idsAreNeverReusedAcrossKinds() {
        var machine = MachineTest.Machine()
        var ids: [MachineTest.Machine.ID] = []
        for round in 0..<50 {
            let subscription = machine.subscribe(round)
            ids.append(subscription.id)
            let (waiter, join) = machine.join(round)
            ids.append(waiter)
            if let flight = join.startFlight { ids.append(flight) }
            let update = machine.beginUpdate(round)
            ids.append(update.id)
            if let flight = update.action.cancelFlight { #expect(ids.contains(flight)) }
            let finish = machine.finishUpdate(update.id, newData: nil, error: nil)
            if let flight = finish.startFlight { ids.append(flight) }
            _ = machine.unsubscribe(subscription.id)
        }
        #expect(Set(ids).count == ids.count)
        #expect(ids.count > 200)
    }

    /// Which effect an action carries, for checking `isEmpty` one field at a time.
    enum Effect: CaseIterable, Sendable {
        case emission, resolution, startFlight, cancelFlight, grantWriter, rejectWriter
    }

    @Test(arguments: Effect.allCases)
    func anActionWithAnyEffectIsNotEmpty(_ effect: Effect) {
        #expect(MachineTest.Machine.Action.none.isEmpty)
        var action = MachineTest.Machine.Action.none
        switch effect {
        case .emission: action.emission = (.loading(content: nil), .one(1))
        case .resolution: action.resolution = ([1: 1], .success("x"))
        case .startFlight: action.startFlight = 1
        case .cancelFlight: action.cancelFlight = 1
        case .grantWriter: action.grantWriter = 1
        case .rejectWriter: action.rejectWriter = 1
        }
        #expect(!action.isEmpty)
    }
}
