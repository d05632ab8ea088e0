/// What a store must do after a transition of a key's state, run outside the state manager.
///
/// Running effects never blocks: yielding to a stream, resolving a one-shot box and starting a task
/// only schedule work. Cancelling a flight runs the user's cancellation handlers on the calling task,
/// which is why it happens here and not inside the actor.
struct KeyEffects: Sendable {
    /// The machine's action: states to emit, waiters to resolve, writers to grant or reject.
    var action: KeySlot.Machine.Action
    /// A flight to start, with its handle.
    var flightToStart: (id: UInt64, handle: FlightHandle)?
    /// The handle of a flight to cancel.
    var flightToCancel: FlightHandle?
    /// Page flights to start, with the key's write version when they were started (see
    /// ``FlightRunner/runPageFlight(_:_:startVersion:)``) and their handles.
    var pagesToStart: [(direction: PageDirection, id: UInt64, version: UInt64, handle: FlightHandle)] = []
    /// The handles of page flights to cancel.
    var pagesToCancel: [FlightHandle] = []
    /// The order of the emission among the key's emissions; a subscription never delivers an older
    /// emission after a newer one, whichever task runs the effects first.
    var emissionSequence: UInt64 = 0
    /// When the content of the emitted state stops being usable (its `maxAge` passes), if the store
    /// knows; a `.loading` or `.error` state is delivered without content once it has passed.
    var contentUsableUntil: CacheTime?

    /// Effects that do nothing.
    static var none: KeyEffects { KeyEffects(action: .none) }

    /// Creates effects that run `action` and start or cancel no flight.
    init(action: KeySlot.Machine.Action) {
        self.action = action
    }

    /// Runs the effects in a fixed order: cancel the superseded flights, emit the state, resolve waiters
    /// (of the data, then of pages), reject and grant writers, and finally start the new flights.
    ///
    /// The state is delivered before the next writer is let through, so a later write's state is never
    /// overtaken by this one; and each subscription drops an emission older than one it already delivered.
    ///
    /// - Parameter runner: The store whose fetch pipeline a new flight runs.
    func run(for runner: some FlightRunner) {
        flightToCancel?.cancel()
        for handle in pagesToCancel { handle.cancel() }
        if let (emitted, recipients) = action.emission {
            var state = emitted
            // Checked as the state is delivered, not when it was decided: a value that aged past `maxAge`
            // while a fetch ran is withdrawn from the `.error` that fetch ends with.
            if let deadline = contentUsableUntil, state.hasWithdrawableContent, runner.hasPassed(deadline) {
                state = state.withoutContent
            }
            switch recipients {
            case .one(let subscription):
                subscription.deliver(state, sequence: emissionSequence)
            case .all(let subscriptions):
                for subscription in subscriptions.values { subscription.deliver(state, sequence: emissionSequence) }
            }
        }
        if let (waiters, outcome) = action.resolution {
            // In the order the callers joined (ids only grow): the scheduler then resumes them roughly in
            // that order, which is much cheaper for a task group than an arbitrary order.
            if waiters.count == 1 {
                waiters.first?.value.resolve(outcome)
            } else {
                // Sorting the plain ids keeps the sort specialised (no allocation per comparison).
                var ids = Array(waiters.keys)
                ids.sort()
                for id in ids { waiters[id]?.resolve(outcome) }
            }
        }
        for waiter in action.releasePageWaiters { waiter.resolve(.success(action.pageOutcome)) }
        action.rejectWriter?.resolve(.success(false))
        for writer in action.rejectPageWriters { writer.resolve(.success(false)) }
        action.grantWriter?.resolve(.success(true))
        if let (id, handle) = flightToStart {
            handle.start { await runner.runFlight(id) }
        }
        for (direction, id, version, handle) in pagesToStart {
            handle.start { await runner.runPageFlight(direction, id, startVersion: version) }
        }
    }
}

/// Something that can run the fetch pipeline of a flight: the store of a key.
protocol FlightRunner: Sendable {
    /// Fetches from the origin, writes the cache and reports each step to the state manager.
    func runFlight(_ id: UInt64) async
    /// Fetches the page in `direction`, merges it into the cache and reports each step to the state
    /// manager.
    ///
    /// - Parameter startVersion: The key's write version when the flight was started: when no write
    ///   completed since, the flight merges into what it read instead of reading again.
    func runPageFlight(_ direction: PageDirection, _ id: UInt64, startVersion: UInt64) async
    /// Whether `deadline`, a moment by the clock of the store's cache, has passed.
    func hasPassed(_ deadline: CacheTime) -> Bool
}
