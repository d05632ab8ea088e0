@testable import StoreFlowable

extension MachineTest.Sim {
    /// Records every invariant the machine, or the simulated store around it, breaks now.
    mutating func check(_ event: String) {
        let problems = invariantProblems()
        if !problems.isEmpty { recordViolations(problems.map { "\(event): \($0)" }) }
    }

    /// The invariants the machine promises, checked against its state and against the simulated tasks.
    func invariantProblems() -> [String] {
        var problems: [String] = []
        let machine = self.machine
        if machine.status.isLoading != (machine.flight != nil) {
            problems.append("status \(machine.status) while the flight is \(String(describing: machine.flight))")
        }
        if !machine.waiters.isEmpty, machine.flight == nil, machine.writeOwner == nil, machine.writeQueue.isEmpty {
            problems.append("\(machine.waiters.count) waiters with no flight and no write to resolve them")
        }
        if subscriberIDs.isEmpty, machine.waiters.isEmpty, let flight = machine.flight, flight.phase != .saving,
            !machine.isFlightPinned
        {
            problems.append("flight \(flight.id) is \(flight.phase) with nobody waiting for it")
        }
        if machine.content != nil, subscriberIDs.isEmpty {
            problems.append("content kept with no subscriber")
        }
        // Idle only once nobody is attached or waiting and every task ended, a draining origin call included.
        let expectedIdle =
            subscriberIDs.isEmpty && waiterIDs.isEmpty && machine.lastError == nil
            && flights.allSatisfy { $0.stage == .finished } && updates.allSatisfy { $0.stage == .finished }
            && invalidations.allSatisfy { $0.stage == .finished } && reloads.allSatisfy { $0.stage == .finished }
        if machine.isIdle != expectedIdle { problems.append("isIdle is \(machine.isIdle), expected \(expectedIdle)") }
        if Set(machine.waiters.keys) != Set(waiterIDs.values) {
            problems.append("machine waiters \(machine.waiters.keys.sorted()) != waiting \(waiterIDs.values.sorted())")
        }
        if Set(machine.subscribers.keys) != Set(activeSubscribers.values) {
            problems.append("machine subscribers differ from the streams that received their first state")
        }
        let reading = subscriberIDs.filter { pendingReads[$0.key] != nil }
        if Set(machine.pendingSubscribers.keys) != Set(reading.values) {
            problems.append("machine pending subscribers differ from the streams still reading")
        }
        problems += flightProblems()
        problems += writeProblems()
        problems += reloadProblems()
        return problems
    }

    /// Single flight: at most one origin call runs (a started flight's call runs until its task reports,
    /// even when cancelled); the key drains exactly while a cancelled flight's call runs; at most one flight
    /// task is live, and it is the machine's flight, in the same phase; a pending flight waits for a drain.
    private func flightProblems() -> [String] {
        var problems: [String] = []
        let calling = flights.filter(\.isCallingTheOrigin)
        if calling.count > 1 {
            problems.append("\(calling.count) origin calls run at once: \(calling.map { "F\($0.index)" })")
        }
        let draining = flights.filter(\.isDraining)
        if machine.draining != draining.first?.id || draining.count > 1 {
            let names = draining.map { "F\($0.index)" }
            problems.append("the machine drains \(String(describing: machine.draining)), cancelled calls run: \(names)")
        }
        let live = flights.filter { !$0.cancelled && $0.stage != .finished }
        guard let flight = machine.flight else {
            return problems
                + (live.isEmpty ? [] : ["flight task F\(live[0].index) runs, but the machine has no flight"])
        }
        guard live.count == 1, let task = live.first, task.id == flight.id else {
            return problems + ["\(live.count) live flight tasks for machine flight \(flight.id)"]
        }
        if task.stage.kind != flight.phase {
            problems.append("F\(task.index) is \(task.stage), the machine says \(flight.phase)")
        }
        if flight.phase == .pending, machine.draining == nil {
            problems.append("F\(task.index) is pending, but no cancelled origin call holds it back")
        }
        return problems
    }

    /// One writer at a time: the write owner is the one task writing, and every waiting writer is queued.
    private func writeProblems() -> [String] {
        var problems: [String] = []
        let savingFlights = flights.filter { if case .saving = $0.stage { true } else { false } }
        let writingUpdates = updates.filter { $0.stage == .writing }
        let marking = invalidations.filter { $0.stage == .marking }
        // A reload holds the turn while it marks and while it reads: nothing writes under its read.
        let reloading = reloads.filter(\.holdsTheTurn)
        let writers = savingFlights.count + writingUpdates.count + marking.count + reloading.count
        if writers > 1 { problems.append("\(writers) tasks hold the write turn at once") }
        switch machine.writeOwner {
        case .flight(let id)?:
            if savingFlights.first?.id != id { problems.append("the write owner, flight \(id), is not saving") }
        case .update(let id)?:
            if writingUpdates.first?.id != id { problems.append("the write owner, update \(id), is not writing") }
        case .page(_, let id)?:
            problems.append("page \(id) holds the write turn, but this simulation never pages")
        case .invalidation(let id)?:
            if marking.first?.id != id { problems.append("the write owner, invalidation \(id), is not marking") }
        case .reload(let id)?:
            if reloading.first?.id != id { problems.append("the write owner, reload \(id), is not reloading") }
        case nil:
            if writers > 0 {
                problems.append("a task writes without the turn")
            }
        }
        var queued: [Int] = []
        for entry in machine.writeQueue {
            switch entry.turn {
            case .flight(let id):
                if machine.flight?.id != id || machine.flight?.phase != .awaitingWrite {
                    problems.append("queued flight \(id) is not the flight awaiting its write")
                }
                if !flights.contains(where: { $0.id == id && $0.writer == entry.writer }) {
                    problems.append("queued flight \(id) has the wrong writer")
                }
            case .update(let id):
                if !updates.contains(where: { $0.id == id && $0.writer == entry.writer && $0.stage == .waiting }) {
                    problems.append("queued update \(id) is not a waiting update")
                }
            case .page(_, let id):
                problems.append("page \(id) is queued, but this simulation never pages")
            case .reload(let id):
                if !reloads.contains(where: { $0.id == id && $0.writer == entry.writer && $0.stage == .waiting }) {
                    problems.append("queued reload \(id) is not a waiting reload")
                }
            case .invalidation(let id):
                if !invalidations.contains(where: { $0.id == id && $0.writer == entry.writer && $0.stage == .waiting })
                {
                    problems.append("queued invalidation \(id) is not a waiting invalidation")
                }
            }
            queued.append(entry.writer)
        }
        if Set(queued).count != queued.count { problems.append("a writer is queued twice") }
        let waiting =
            flights.filter { if case .awaitingTurn = $0.stage { true } else { false } }.map(\.writer)
            + updates.filter { $0.stage == .waiting }.map(\.writer)
            + invalidations.filter { $0.stage == .waiting }.map(\.writer)
            + reloads.filter { $0.stage == .waiting }.map(\.writer)
        if Set(waiting) != Set(queued) { problems.append("waiting writers \(waiting) != queued writers \(queued)") }
        return problems
    }

    /// Reloads: the value of a flight that was writing when a reload began is never valid in the cache
    /// once the reload marked it (until something else writes); a reload is queued only while the turn is
    /// held, and only a reload that must mark ever marks.
    private func reloadProblems() -> [String] {
        var problems: [String] = []
        if cache.isValid, case .flight(let index) = cacheWriter {
            for reload in reloads where reload.savingFlight == index && reload.mark == .applied {
                problems.append("the cache holds F\(index)'s value as valid after R\(reload.index) marked it")
            }
        }
        for reload in reloads where reload.mark != nil && !reload.mustMark {
            problems.append("R\(reload.index) marked, though it did not have to")
        }
        return problems
    }
}
