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
        case subscriber, subscriberStillReading, waiter, drainingFlight, pendingFlight, savingFlight
        case writeOwnerAndQueue, rememberedError
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
        case .subscriberStillReading:
            let subscriber = sim.attach()
            #expect(!sim.machine.isIdle)
            sim.detach(subscriber)
        case .waiter:
            let waiter = sim.request(.origin)
            #expect(!sim.machine.isIdle)
            if let waiter { sim.cancel(waiter) }
            sim.completeFetch(0, with: .success("f0"))
        case .drainingFlight:
            // The flight is cancelled during its origin call, which counts as running until it reports.
            let waiter = sim.request(.origin)
            if let waiter { sim.cancel(waiter) }
            #expect(sim.machine.flight == nil)
            #expect(sim.machine.draining != nil)
            #expect(!sim.machine.isIdle)
            #expect(!sim.machine.isIdleExceptForError)
            sim.completeFetch(0, with: .failure(.cancelled))
        case .pendingFlight:
            // A flight held back by a draining one keeps the key after the drain, until it ends.
            let first = sim.request(.origin)
            if let first { sim.cancel(first) }
            let second = sim.request(.origin)
            #expect(sim.machine.flight?.phase == .pending)
            sim.completeFetch(0, with: .success("f0"))
            #expect(sim.machine.draining == nil)
            #expect(!sim.machine.isIdle)
            if let second { sim.cancel(second) }
            #expect(!sim.machine.isIdle)
            sim.completeFetch(1, with: .failure(.cancelled))
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
        // A flight cancelled during its origin call keeps the key until its task reports back.
        #expect((sim.machine.draining != nil) == (start == .fetching))
        if start == .fetching { #expect(!sim.machine.isIdle) }
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
        let stray = machine.flightReturned(42, writer: 1)
        #expect(stray.decision == .discard)
        #expect(stray.action.isEmpty)
        #expect(machine.flightFailed(42, error: MachineTest.Failure.fetch).isEmpty)
        #expect(machine.isIdle)
    }

    /// Ids of subscribers, waiters, updates and flights (started at once or held back by a drain) are
    /// never reused; a started flight is one the machine created.
    @Test
    func idsAreNeverReusedAcrossKinds() {
        var machine = MachineTest.Machine()
        var ids: [MachineTest.Machine.ID] = []
        var lastFlight: MachineTest.Machine.ID?
        /// Records the machine's flight when it is a new one; a flight keeps its id while it exists.
        func noteFlight(_ machine: MachineTest.Machine, _ action: MachineTest.Machine.Action) {
            if let flight = machine.flight?.id, flight != lastFlight {
                ids.append(flight)
                lastFlight = flight
            }
            if let started = action.startFlight { #expect(started == lastFlight) }
        }
        for round in 0..<50 {
            let subscription = machine.subscribe(round)
            ids.append(subscription.id)
            let (waiter, join) = machine.join(round)
            ids.append(waiter)
            noteFlight(machine, join)
            let update = machine.beginUpdate(round)
            ids.append(update.id)
            if let flight = update.action.cancelFlight { #expect(ids.contains(flight)) }
            // The superseded flight drains: the clear's flight is held back until it reports.
            let finish = machine.finishUpdate(update.id, newData: nil, error: nil)
            #expect(finish.startFlight == nil)
            noteFlight(machine, finish)
            if let draining = machine.draining {
                noteFlight(machine, machine.flightFailed(draining, error: MachineTest.Failure.cancelled))
            }
            _ = machine.unsubscribe(subscription.id)
        }
        #expect(Set(ids).count == ids.count)
        #expect(ids.count > 200)
    }

    /// Which effect an action carries, for checking `isEmpty` one field at a time.
    enum Effect: CaseIterable, Sendable {
        case emission, resolution, startFlight, cancelFlight, grantWriter, rejectWriter
    }

    /// `merge` adds the flight start, the cancellation and the rejection of another action, and keeps the
    /// rest of this one.
    @Test
    func mergeAddsTheStartCancellationAndRejection() {
        var action = MachineTest.Machine.Action(emission: (.loading(content: nil), .one(1)), grantWriter: 7)
        action.merge(
            MachineTest.Machine.Action(
                emission: (.loading(content: "x"), .one(2)), resolution: ([1: 1], .success("x")), startFlight: 3,
                cancelFlight: 4, grantWriter: 8, rejectWriter: 5))
        #expect(action.startFlight == 3)
        #expect(action.cancelFlight == 4)
        #expect(action.rejectWriter == 5)
        #expect(action.grantWriter == 7)
        #expect(action.resolution == nil)
        if case (.loading(let content), .one(let subscriber))? = action.emission {
            #expect(content == nil)
            #expect(subscriber == 1)
        } else {
            Issue.record("merge replaced the emission")
        }
        var empty = MachineTest.Machine.Action.none
        empty.merge(.none)
        #expect(empty.isEmpty)
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
