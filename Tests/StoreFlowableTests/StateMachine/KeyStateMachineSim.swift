@testable import StoreFlowable

extension MachineTest {
    /// Drives a ``KeyStateMachine`` the way `CallbackStore` does, against a simulated cache, one step at
    /// a time and without concurrency; records every effect and checks the invariants after each event.
    struct Sim {
        /// A fetch task, as the store runs it after the machine asked to start a flight.
        struct FlightTask {
            enum Stage: Equatable {
                case fetching
                case awaitingTurn(String)
                case saving(String)
                case finished

                /// The stage without the value the flight carries.
                var kind: Machine.FlightPhase? {
                    switch self {
                    case .fetching: .fetching
                    case .awaitingTurn: .awaitingWrite
                    case .saving: .saving
                    case .finished: nil
                    }
                }
            }

            let index: Int
            let id: Machine.ID
            let writer: Int
            /// When the flight started, on the simulation's clock.
            let startedAt: Int
            var stage = Stage.fetching
            var cancelled = false
            /// Successful non-nil updates that finished while this flight had not started saving: it must
            /// never write after them (update wins).
            var outrunBy: [Int] = []
        }

        /// An `update(newData:)` call in progress.
        struct UpdateTask {
            enum Stage: Equatable {
                case waiting
                case writing
                case finished
            }

            let index: Int
            let id: Machine.ID
            let writer: Int
            /// When the update began, on the simulation's clock.
            let begunAt: Int
            let value: String?
            var stage: Stage
        }

        private(set) var machine = Machine()
        /// What the simulated cache holds, and whether `needRefresh` would call it valid.
        var cache: (value: String?, isValid: Bool) = (nil, false)
        /// The effects recorded since the scenario began.
        private(set) var log = Log()
        /// Broken invariants, each prefixed by the event after which it was found.
        private(set) var violations: [String] = []

        /// Attached subscribers and their machine ids.
        private(set) var subscriberIDs: [Int: Machine.ID] = [:]
        /// Subscribers whose initial read has not been reported: the version they got and what they read.
        private(set) var pendingReads: [Int: (version: UInt64, read: (value: String?, isValid: Bool)?)] = [:]
        /// Waiters still waiting and their machine ids.
        private(set) var waiterIDs: [Int: Machine.ID] = [:]
        private(set) var flights: [FlightTask] = []
        private(set) var updates: [UpdateTask] = []

        private var seenIDs: Set<Machine.ID> = []
        /// Counts the ids handed out, to order flights and updates.
        private var clock = 0
        private var resolvedWaiters: Set<Int> = []
        private var writerLabels: [Int: String] = [:]
        private var nextWriter = 1
        private var nextSubscriber = 0
        private var nextWaiter = 0
        private var nextFlight = 0
        private var nextUpdate = 0

        /// The machine's status, rendered.
        var status: Status { Status(machine.status) }

        /// A snapshot of the effects and the final state, for comparing with an expectation.
        var snapshot: Snapshot {
            Snapshot(
                log: log, status: status, content: machine.content, isIdle: machine.isIdle,
                cache: cache.value)
        }

        /// Ends the setup: clears the log and numbers everything created from now on from 1.
        mutating func beginScenario() {
            log = Log()
            nextSubscriber = max(nextSubscriber, 1)
            nextWaiter = max(nextWaiter, 1)
            nextFlight = max(nextFlight, 1)
            nextUpdate = max(nextUpdate, 1)
        }

        // MARK: Store calls

        /// `publish(forceRefresh:)`: attaches, reads the cache and reports the read at once.
        mutating func publish(forceRefresh: Bool = false) -> Int {
            let subscriber = attach()
            reportRead(subscriber, forceRefresh: forceRefresh)
            return subscriber
        }

        /// The first half of `publish`: the stream attaches; its cache read comes later.
        mutating func attach() -> Int {
            let subscriber = MachineTest.subscriber(nextSubscriber)
            nextSubscriber += 1
            let (id, version) = machine.subscribe(subscriber)
            noteNewID(id, "subscribe")
            subscriberIDs[subscriber] = id
            pendingReads[subscriber] = (version, nil)
            check("subscribe \(subscriber)")
            return subscriber
        }

        /// The subscriber's task reads the cache (the read is reported later).
        mutating func readCache(_ subscriber: Int) {
            pendingReads[subscriber]?.read = cache
        }

        /// The subscriber's task reports its read (reading the cache now if it has not yet).
        mutating func reportRead(_ subscriber: Int, forceRefresh: Bool = false) {
            guard let pending = pendingReads.removeValue(forKey: subscriber), let id = subscriberIDs[subscriber]
            else { return }
            let read = pending.read ?? cache
            let action = machine.initialRead(
                subscriber: id, version: pending.version, cached: read.value, isValid: read.isValid,
                forceRefresh: forceRefresh)
            apply(action, "initialRead \(subscriber)")
        }

        /// The stream of `subscriber` terminated.
        mutating func detach(_ subscriber: Int) {
            guard let id = subscriberIDs.removeValue(forKey: subscriber) else { return }
            pendingReads[subscriber] = nil
            apply(machine.unsubscribe(id), "unsubscribe \(subscriber)")
        }

        /// A reading call of the store: returns the waiter it adds, or `nil` when the cache served it.
        mutating func request(_ read: Read) -> Int? {
            if cache.value != nil, cache.isValid, !read.joins(.valid) { return nil }
            let waiter = MachineTest.waiter(nextWaiter)
            nextWaiter += 1
            let (id, action) = machine.join(waiter)
            noteNewID(id, "join")
            waiterIDs[waiter] = id
            apply(action, "join \(waiter)")
            return waiter
        }

        /// The task of `waiter` was cancelled.
        mutating func cancel(_ waiter: Int) {
            guard let id = waiterIDs.removeValue(forKey: waiter) else { return }
            apply(machine.leave(id), "leave \(waiter)")
        }

        /// `update(newData:)` begins: returns the update's index and whether it may write at once.
        mutating func beginUpdate(_ value: String?) -> (index: Int, mayWriteNow: Bool) {
            let index = nextUpdate
            nextUpdate += 1
            let writer = makeWriter("U\(index)")
            let (id, mayWriteNow, action) = machine.beginUpdate(writer)
            let begunAt = noteNewID(id, "beginUpdate")
            updates.append(
                UpdateTask(
                    index: index, id: id, writer: writer, begunAt: begunAt, value: value,
                    stage: mayWriteNow ? .writing : .waiting))
            apply(action, "beginUpdate U\(index)")
            return (index, mayWriteNow)
        }

        /// Update `index` finished its cache write, which fails when `failing`. Checks that every subscriber
        /// received the key's new state once, and what the update promises: a successful value wins over
        /// every flight not yet saving, a failed write is remembered, and a clear fetches for whoever is left.
        mutating func finishUpdate(_ index: Int, failing: Bool = false) {
            guard let position = updates.firstIndex(where: { $0.index == index }),
                updates[position].stage == .writing
            else {
                violations.append("finishUpdate U\(index): the update does not hold the write turn")
                return
            }
            updates[position].stage = .finished
            let task = updates[position]
            if !failing { cache = (task.value, task.value != nil) }
            if !failing, task.value != nil {
                // Flights that have not started saving must never write after this update.
                for flight in flights.indices
                where flights[flight].stage.kind == .fetching || flights[flight].stage.kind == .awaitingWrite {
                    flights[flight].outrunBy.append(index)
                }
            }
            let emittedBefore = subscriberIDs.keys.map { ($0, log.emissions[$0]?.count ?? 0) }
            let action = machine.finishUpdate(task.id, newData: task.value, error: failing ? Failure.write : nil)
            let event = "finishUpdate U\(index)"
            apply(action, event)
            // Every subscriber receives the key's state after the update, exactly once.
            let current = currentState
            for (subscriber, count) in emittedBefore {
                let emitted = log.emissions[subscriber] ?? []
                if emitted.count != count + 1 || emitted.last != current {
                    let state = current.map { "\($0)" } ?? "nothing"
                    violations.append("\(event): \(subscriber) got \(emitted.dropFirst(count)), not once \(state)")
                }
            }
            checkOutcome(of: task, failing: failing, event)
        }

        /// The state the subscribers of the key should hold now, or `nil` when there is nothing to show.
        private var currentState: Emitted? {
            if machine.flight != nil { return .loading(machine.content) }
            if let error = machine.lastError { return .error(machine.content, MachineTest.name(of: error)) }
            return machine.content.map { .completed($0) }
        }

        /// What a finished update leaves behind, whoever was subscribed or waiting.
        private mutating func checkOutcome(of update: UpdateTask, failing: Bool, _ event: String) {
            if failing {
                // A failed write is remembered (even with a flight running) and answers every waiter.
                if machine.lastError.map(MachineTest.name(of:)) != Failure.write.name {
                    violations.append("\(event): the failed write is not the remembered error")
                }
                if !machine.waiters.isEmpty { violations.append("\(event): waiters outlived a failed update") }
            } else if let value = update.value {
                // Update wins: no flight survives, every waiter got the value and every subscriber holds it.
                if let flight = machine.flight {
                    violations.append("\(event): flight \(flight.id), \(flight.phase), survived the update")
                }
                if !machine.waiters.isEmpty { violations.append("\(event): waiters outlived the update") }
                for subscriber in subscriberIDs.keys where log.emissions[subscriber]?.last != .completed(value) {
                    violations.append("\(event): \(subscriber) does not hold completed(\(value))")
                }
            } else if machine.flight == nil, !subscriberIDs.isEmpty || !waiterIDs.isEmpty {
                // A clear fetches for whoever is left (never stuck in loading or waiting).
                violations.append("\(event): a clear left subscribers or waiters without a flight")
            }
        }

        /// The origin call of flight `index` returns.
        mutating func completeFetch(_ index: Int, with result: Result<String, Failure>) {
            guard let position = flights.firstIndex(where: { $0.index == index }),
                flights[position].stage == .fetching
            else {
                violations.append("completeFetch F\(index): the flight is not fetching")
                return
            }
            let task = flights[position]
            flights[position].stage = .finished
            switch result {
            case .failure(let error):
                let action = machine.flightFailed(task.id, error: error)
                if task.cancelled, !action.isEmpty {
                    violations.append("flightFailed F\(index): a cancelled flight still had effects")
                }
                apply(action, "flightFailed F\(index)")
            case .success(let value):
                let decision = machine.flightReturned(task.id, writer: task.writer)
                switch decision {
                case .discard:
                    if !task.cancelled { violations.append("flightReturned F\(index): a live flight was discarded") }
                case .write:
                    flights[position].stage = .saving(value)
                    checkMayWrite(task, "flightReturned F\(index)")
                case .waitForTurn:
                    flights[position].stage = .awaitingTurn(value)
                }
                if task.cancelled, decision != .discard {
                    violations.append("flightReturned F\(index): a cancelled flight was told \(decision)")
                }
                check("flightReturned F\(index)")
            }
        }

        /// The cache write of flight `index` finishes, and fails when `failing`.
        mutating func completeSave(_ index: Int, failing: Bool = false) {
            guard let position = flights.firstIndex(where: { $0.index == index }),
                case .saving(let value) = flights[position].stage
            else {
                violations.append("completeSave F\(index): the flight is not saving")
                return
            }
            flights[position].stage = .finished
            let id = flights[position].id
            if failing {
                apply(machine.flightSaveFailed(id, error: Failure.save), "flightSaveFailed F\(index)")
            } else {
                cache = (value, true)
                apply(machine.flightSaved(id, data: value), "flightSaved F\(index)")
            }
        }

        /// Forgets the remembered error, as `resetError(for:of:)` does.
        mutating func clearError() {
            machine.clearError()
            check("clearError")
        }

        /// Runs every task to its end: writes first, then origin calls in start order. Flight `n`
        /// returns `"f<n>"`; `outcome` decides how fetches and saves go; updates in `failingUpdates` fail.
        mutating func drain(_ outcome: Outcome = .fetchSuccess, failingUpdates: Set<Int> = []) {
            for _ in 0..<1_000 {
                if let update = updates.first(where: { $0.stage == .writing }) {
                    finishUpdate(update.index, failing: failingUpdates.contains(update.index))
                } else if let flight = flights.first(where: { if case .saving = $0.stage { true } else { false } }) {
                    completeSave(flight.index, failing: outcome == .saveFailure)
                } else if let flight = flights.first(where: { $0.stage == .fetching }) {
                    let fails = outcome == .fetchFailure && !flight.cancelled
                    completeFetch(flight.index, with: fails ? .failure(.fetch) : .success("f\(flight.index)"))
                } else {
                    break
                }
            }
            for flight in flights where flight.stage != .finished {
                violations.append("drain: F\(flight.index) is stuck in \(flight.stage)")
            }
            for update in updates where update.stage != .finished {
                violations.append("drain: U\(update.index) is stuck in \(update.stage)")
            }
        }

        /// Adds broken invariants found by ``check(_:)``.
        mutating func recordViolations(_ problems: [String]) {
            violations += problems
        }

        // MARK: Effects

        private mutating func makeWriter(_ label: String) -> Int {
            let writer = nextWriter
            nextWriter += 1
            writerLabels[writer] = label
            return writer
        }

        @discardableResult
        private mutating func noteNewID(_ id: Machine.ID, _ event: String) -> Int {
            if !seenIDs.insert(id).inserted { violations.append("\(event): id \(id) was handed out twice") }
            clock += 1
            return clock
        }

        /// Promise 5 (update wins): a flight may only start writing if no update began after it, and if no
        /// successful non-nil update finished while it had not started saving.
        private mutating func checkMayWrite(_ flight: FlightTask, _ event: String) {
            for update in updates where update.begunAt > flight.startedAt {
                violations.append("\(event): F\(flight.index) writes after U\(update.index), which began after it")
            }
            for update in flight.outrunBy {
                violations.append("\(event): F\(flight.index) writes after U\(update), which finished before it saved")
            }
        }

        private func label(ofWriter writer: Int) -> String { writerLabels[writer] ?? "writer \(writer)" }

        /// Runs an action the way `KeyEffects.run` does, recording it, then checks the invariants.
        private mutating func apply(_ action: Machine.Action, _ event: String) {
            if let id = action.cancelFlight { cancelFlight(id, action, event) }
            if let writer = action.rejectWriter { reject(writer, event) }
            if let writer = action.grantWriter { grant(writer, event) }
            if let (state, recipients) = action.emission { emit(state, to: recipients, event) }
            if let (waiters, outcome) = action.resolution { resolve(waiters, with: outcome, event) }
            if let id = action.startFlight {
                let startedAt = noteNewID(id, event)
                let index = nextFlight
                nextFlight += 1
                flights.append(
                    FlightTask(index: index, id: id, writer: makeWriter("F\(index)"), startedAt: startedAt))
                log.started.append("F\(index)")
            }
            check(event)
        }

        private mutating func cancelFlight(_ id: Machine.ID, _ action: Machine.Action, _ event: String) {
            guard let position = flights.firstIndex(where: { $0.id == id && !$0.cancelled }) else {
                violations.append("\(event): cancelled flight \(id), which is not running")
                return
            }
            let task = flights[position]
            if case .saving = task.stage { violations.append("\(event): cancelled F\(task.index) while it saves") }
            if case .awaitingTurn = task.stage, action.rejectWriter != task.writer {
                violations.append("\(event): cancelled F\(task.index) without rejecting its queued write")
            }
            flights[position].cancelled = true
            log.cancelled.append("F\(task.index)")
        }

        private mutating func reject(_ writer: Int, _ event: String) {
            guard let position = flights.firstIndex(where: { $0.writer == writer }),
                case .awaitingTurn = flights[position].stage
            else {
                violations.append("\(event): rejected \(label(ofWriter: writer)), which does not wait for a turn")
                return
            }
            flights[position].stage = .finished
            log.rejected.append(label(ofWriter: writer))
        }

        private mutating func grant(_ writer: Int, _ event: String) {
            if let position = flights.firstIndex(where: { $0.writer == writer }),
                case .awaitingTurn(let value) = flights[position].stage
            {
                flights[position].stage = .saving(value)
                checkMayWrite(flights[position], event)
                // Promise 7: a flight nobody wants is cancelled, never let through to write.
                if machine.subscribers.isEmpty, machine.waiters.isEmpty {
                    violations.append("\(event): granted F\(flights[position].index), which nobody wants")
                }
            } else if let position = updates.firstIndex(where: { $0.writer == writer && $0.stage == .waiting }) {
                updates[position].stage = .writing
            } else {
                violations.append("\(event): granted \(label(ofWriter: writer)), which does not wait for a turn")
                return
            }
            log.granted.append(label(ofWriter: writer))
        }

        private mutating func emit(_ state: LoadingState<String>, to recipients: Machine.Recipients, _ event: String) {
            let rendered = Emitted(state)
            switch recipients {
            case .one(let subscriber):
                if subscriberIDs[subscriber] == nil { violations.append("\(event): emitted to detached \(subscriber)") }
                log.emit(subscriber, rendered)
            case .all(let subscribers):
                if subscribers.count != subscriberIDs.count
                    || subscribers.contains(where: { id, subscriber in subscriberIDs[subscriber] != id })
                {
                    violations.append("\(event): emitted to \(subscribers), attached are \(subscriberIDs)")
                }
                for subscriber in subscribers.values { log.emit(subscriber, rendered) }
            }
        }

        private mutating func resolve(
            _ waiters: [Machine.ID: Int], with outcome: Result<String, any Error>, _ event: String
        ) {
            if waiters.isEmpty { violations.append("\(event): resolved an empty set of waiters") }
            for (id, waiter) in waiters {
                if waiterIDs[waiter] != id { violations.append("\(event): resolved \(waiter), which is not waiting") }
                if !resolvedWaiters.insert(waiter).inserted {
                    violations.append("\(event): resolved \(waiter) twice")
                }
                waiterIDs[waiter] = nil
                log.resolutions[waiter] = Resolution(outcome)
            }
        }
    }
}
