@testable import StoreFlowable

extension MachineTest {
    /// Drives a ``KeyStateMachine`` the way `CallbackStore` does, against a simulated cache, one step at
    /// a time and without concurrency; records every effect and checks the invariants after each event.
    struct Sim {
        /// A flight of the machine, and the fetch task the store runs for it once the machine starts it.
        struct FlightTask {
            enum Stage: Equatable {
                /// The machine created the flight but holds its origin call back (a cancelled flight drains).
                case pending
                /// The task runs the origin call; it counts as running until the task reports back.
                case fetching
                case awaitingTurn(String)
                case saving(String)
                case finished

                /// The stage without the value the flight carries.
                var kind: FlightPhase? {
                    switch self {
                    case .pending: .pending
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
            /// When the machine created the flight, on the simulation's clock.
            let createdAt: Int
            var stage: Stage
            /// The machine cancelled the flight (its task still reports back once).
            var cancelled = false
            /// The machine dropped the flight while it was pending: its origin call never starts.
            var forgotten = false
            /// Successful non-nil updates that finished while this flight had not started saving: it must
            /// never write after them (update wins).
            var outrunBy: [Int] = []
            /// When the flight's origin call started, on the simulation's clock; `nil` until it starts.
            var fetchStartedAt: Int?

            /// Whether the flight's origin call runs: from its start until its task reports back.
            var isCallingTheOrigin: Bool { stage == .fetching }

            /// Whether the flight was cancelled during its origin call, which has not reported back yet.
            var isDraining: Bool { cancelled && stage == .fetching }
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

        /// An `invalidate()` call in progress: it waits for the write turn, marks the cached value stale
        /// while holding it, then reports.
        struct InvalidationTask {
            enum Stage: Equatable {
                case waiting
                case marking
                case finished
            }

            let index: Int
            let id: Machine.ID
            let writer: Int
            /// When the invalidation began, on the simulation's clock.
            let begunAt: Int
            var stage: Stage
            /// The mark failed (`invalidateCache()` threw): the cache was left as it was.
            var markFailed = false
        }

        /// A `reloadFromCache()` call in progress: it waits for the write turn, marks the cached value stale
        /// when the machine says so (a flight was writing as it began), reads the cache, then reports what
        /// it read.
        struct ReloadTask {
            enum Stage: Equatable {
                case waiting
                case marking
                case reading
                case finished
            }

            /// How the mark went: applied, thrown, or a no-op (a callback whose cache keeps no mark, as
            /// the default `invalidateCache()` and the paging adapter).
            enum Mark: CaseIterable, Sendable {
                case applied
                case failed
                case noMark
            }

            let index: Int
            let id: Machine.ID
            let writer: Int
            /// When the reload began, on the simulation's clock.
            let begunAt: Int
            /// The machine said the reload must mark the cached value stale before reading.
            let mustMark: Bool
            /// The flight that was writing its value when the reload began, if any.
            let savingFlight: Int?
            var stage: Stage
            /// How the mark went, once made.
            var mark: Mark?
            /// What the reload's read found, once made (its report may come later).
            var read: (value: String?, isValid: Bool)?

            /// Whether the reload holds the write turn now.
            var holdsTheTurn: Bool { stage == .marking || stage == .reading }
        }

        /// Who wrote what the simulated cache holds.
        enum CacheWriter: Equatable {
            /// Something outside the manager (another process), or the setup.
            case external
            /// The flight with this index.
            case flight(Int)
            /// The update with this index.
            case update(Int)
        }

        /// What a subscriber's `initialRead` should send, by the rules of the machine.
        enum FirstState: Equatable, CustomStringConvertible {
            /// Nothing: a write is in progress (its outcome comes later), or there is nothing to show.
            case nothing
            /// A state sent to this subscriber only.
            case own(Emitted)
            /// A new flight, announced to every subscriber (this one included) with `.loading(content)`.
            case flightStart(String?)
            /// A state other than a flight's start, sent to every subscriber (never expected).
            case broadcast(Emitted)

            var description: String {
                switch self {
                case .nothing: "nothing"
                case .own(let state): "\(state) to it"
                case .flightStart(let content): "a flight announced with loading(\(content ?? "nil"))"
                case .broadcast(let state): "\(state) to everyone"
                }
            }
        }

        /// How often a simulation went through the rarer transitions, so that random runs can show they did.
        struct Coverage {
            /// Flights created pending, held back by a draining one.
            var heldBack = 0
            /// Reports of cancelled flights' tasks.
            var drainReports = 0
            /// Pending flights started by a drain report.
            var startedAfterDrain = 0
            /// Pending flights dropped before they started.
            var forgotten = 0
            /// Initial reads overtaken by a completed write.
            var staleReads = 0
            /// Initial reads reported while a write was in progress.
            var droppedReads = 0
            /// Invalidations that dropped a flight that had not reached the cache.
            var invalidationsDroppingFlights = 0
            /// Invalidations that had to wait for the write turn.
            var queuedInvalidations = 0
            /// Invalidations that found a flight saving (its value is marked after it is written).
            var invalidationsBehindASave = 0
            /// Revalidations that pinned a flight that already existed.
            var revalidationsPinningAFlight = 0
            /// Pinned flights that outlived their last waiter or subscriber leaving.
            var pinnedFlightsKeptAlive = 0
            /// Reloads that dropped a flight that had not reached the cache.
            var reloadsDroppingFlights = 0
            /// Reloads that had to wait for the write turn.
            var queuedReloads = 0
            /// Reloads that found a flight writing (they mark its value stale once it is written).
            var reloadsBehindASave = 0
            /// Reloads whose fresh read answered the waiting callers.
            var reloadsAnsweringWaiters = 0
            /// Reloads whose read started a fetch for subscribers or waiters.
            var reloadsStartingAFetch = 0
            /// Reloads that found a flight started while they held the turn.
            var reloadsOvertakenByAFlight = 0
        }

        private(set) var machine = Machine()
        /// The rarer transitions this simulation went through.
        private(set) var coverage = Coverage()
        /// What the simulated cache holds, and whether `needRefresh` would call it valid. Setting it from
        /// outside (a new value, or a value made valid) is a change made outside the manager.
        var cache: (value: String?, isValid: Bool) = (nil, false) {
            didSet {
                if cache.value != oldValue.value || (cache.isValid && !oldValue.isValid) { cacheWriter = .external }
            }
        }
        /// Who wrote what ``cache`` holds.
        private(set) var cacheWriter = CacheWriter.external
        /// The effects recorded since the scenario began.
        private(set) var log = Log()
        /// Broken invariants, each prefixed by the event after which it was found.
        private(set) var violations: [String] = []

        /// Attached subscribers (whether or not their initial read was reported) and their machine ids.
        private(set) var subscriberIDs: [Int: Machine.ID] = [:]
        /// Subscribers whose initial read has not been reported: the version they got and what they read.
        private(set) var pendingReads: [Int: (version: UInt64, read: (value: String?, isValid: Bool)?)] = [:]
        /// Subscribers whose read was dropped because a write was in progress, and that have no state yet.
        private(set) var awaitingFirstState: Set<Int> = []
        /// Waiters still waiting and their machine ids.
        private(set) var waiterIDs: [Int: Machine.ID] = [:]
        private(set) var flights: [FlightTask] = []
        private(set) var updates: [UpdateTask] = []
        private(set) var invalidations: [InvalidationTask] = []
        private(set) var reloads: [ReloadTask] = []

        private var seenIDs: Set<Machine.ID> = []
        /// Counts the ids handed out, to order flights and updates.
        private var clock = 0
        private var resolvedWaiters: Set<Int> = []
        /// Subscribers that received at least one state (never reset, unlike the log).
        private var received: Set<Int> = []
        /// The subscriber whose `initialRead` is being applied.
        private var reading: Int?
        private var writerLabels: [Int: String] = [:]
        private var nextWriter = 1
        private var nextSubscriber = 0
        private var nextWaiter = 0
        private var nextFlight = 0
        private var nextUpdate = 0
        private var nextInvalidation = 0
        private var nextReload = 0

        /// The machine's status, rendered.
        var status: Status { Status(machine.status) }

        /// Attached subscribers whose initial read was reported: those the machine broadcasts to.
        var activeSubscribers: [Int: Machine.ID] { subscriberIDs.filter { pendingReads[$0.key] == nil } }

        /// The flight task of the machine's flight, if any.
        var currentFlight: FlightTask? { machine.flight.flatMap { flight in flights.first { $0.id == flight.id } } }

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
            nextInvalidation = max(nextInvalidation, 1)
            nextReload = max(nextReload, 1)
        }

        /// The label of the flight `id`, as the log names it.
        func label(ofFlight id: Machine.ID) -> String {
            flights.first { $0.id == id }.map { "F\($0.index)" } ?? "flight \(id)"
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

        /// The subscriber's task reports its read (reading the cache now if it has not yet). Checks that the
        /// subscriber's first state is the one the rules of `initialRead` give.
        mutating func reportRead(_ subscriber: Int, forceRefresh: Bool = false) {
            guard let pending = pendingReads.removeValue(forKey: subscriber), let id = subscriberIDs[subscriber]
            else { return }
            let read = pending.read ?? cache
            let expected = Self.firstState(
                of: machine, readVersion: pending.version, read: read, forceRefresh: forceRefresh)
            let hadFlight = machine.flight != nil
            let writeInProgress = machine.writeOwner != nil
            if pending.version != machine.version { coverage.staleReads += 1 }
            if writeInProgress { coverage.droppedReads += 1 }
            let action = machine.initialRead(
                subscriber: id, version: pending.version, cached: read.value, isValid: read.isValid,
                forceRefresh: forceRefresh)
            let event = "initialRead \(subscriber)"
            let actual: FirstState
            switch action.emission {
            case nil: actual = .nothing
            case (let state, .one)?: actual = .own(Emitted(state))
            case (let state, .all)?:
                let rendered = Emitted(state)
                actual = rendered == .loading(rendered.content) ? .flightStart(rendered.content) : .broadcast(rendered)
            }
            if actual != expected { violations.append("\(event): sent \(actual), expected \(expected)") }
            let startsFlight: Bool = if case .flightStart = expected { true } else { false }
            if (machine.flight != nil) != (hadFlight || startsFlight) {
                violations.append("\(event): the flight went from \(hadFlight) to \(machine.flight != nil)")
            }
            // A current read tells the key what the cache holds; a stale one does not.
            if pending.version == machine.version, machine.content != read.value {
                violations.append("\(event): content \(String(describing: machine.content)) after reading \(read)")
            }
            reading = subscriber
            apply(action, event)
            reading = nil
            if !received.contains(subscriber) {
                if writeInProgress {
                    awaitingFirstState.insert(subscriber)
                } else {
                    violations.append("\(event): \(subscriber) was left with no state and no write in progress")
                }
            }
        }

        /// What `initialRead` should send to a subscriber, by the rules: a read overtaken by a completed
        /// write yields the key's current state (or a fetch when there is none), a write in progress sends nothing, and a current read with
        /// no write follows the cache (a flight in progress, an invalid cache or `forceRefresh` fetch).
        static func firstState(
            of machine: Machine, readVersion: UInt64, read: (value: String?, isValid: Bool), forceRefresh: Bool
        ) -> FirstState {
            let readIsCurrent = readVersion == machine.version
            let content = readIsCurrent ? read.value : machine.content
            // A read that found nothing valid fetches unless something replaced the data since, or is about
            // to (an invalidation, which only marks, does not count).
            if read.value == nil || !read.isValid, machine.replacedVersion <= readVersion, machine.flight == nil,
                !machine.hasUpdateInProgress
            {
                return .flightStart(content)
            }
            if machine.writeOwner != nil {
                return forceRefresh && machine.flight == nil ? .flightStart(content) : .nothing
            }
            if !readIsCurrent {
                if forceRefresh, machine.flight == nil { return .flightStart(content) }
                // Nothing to show (no flight, error or content): fetch, as for an empty cache.
                return currentState(of: machine).map { .own($0) } ?? .flightStart(content)
            }
            if machine.flight != nil { return .own(.loading(read.value)) }
            guard let value = read.value, read.isValid, !forceRefresh else { return .flightStart(read.value) }
            if let error = machine.lastError { return .own(.error(value, MachineTest.name(of: error))) }
            return .own(.completed(value))
        }

        /// The state the subscribers of `machine` should hold, or `nil` when there is nothing to show.
        static func currentState(of machine: Machine) -> Emitted? {
            if machine.flight != nil { return .loading(machine.content) }
            if let error = machine.lastError { return .error(machine.content, MachineTest.name(of: error)) }
            return machine.content.map { .completed($0) }
        }

        /// The stream of `subscriber` terminated (before or after its initial read was reported).
        mutating func detach(_ subscriber: Int) {
            guard let id = subscriberIDs.removeValue(forKey: subscriber) else { return }
            pendingReads[subscriber] = nil
            awaitingFirstState.remove(subscriber)
            let pinned = machine.isFlightPinned ? machine.flight : nil
            apply(machine.unsubscribe(id), "unsubscribe \(subscriber)")
            checkPinnedFlightKept(pinned, "unsubscribe \(subscriber)")
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
            let pinned = machine.isFlightPinned ? machine.flight : nil
            apply(machine.leave(id), "leave \(waiter)")
            checkPinnedFlightKept(pinned, "leave \(waiter)")
        }

        /// A pinned flight (a background revalidation) is never dropped because its audience left.
        private mutating func checkPinnedFlightKept(_ pinned: (id: Machine.ID, phase: FlightPhase)?, _ event: String) {
            guard let pinned else { return }
            if machine.flight?.id != pinned.id {
                violations.append("\(event): pinned flight \(label(ofFlight: pinned.id)) was dropped")
            } else if subscriberIDs.isEmpty, waiterIDs.isEmpty {
                coverage.pinnedFlightsKeptAlive += 1
            }
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
        /// that received its first state gets the key's new state once (the others get nothing), and what
        /// the update promises: a successful value wins over every flight not yet saving, a failed write is
        /// remembered, and a clear fetches for whoever is left.
        mutating func finishUpdate(_ index: Int, failing: Bool = false) {
            guard let position = updates.firstIndex(where: { $0.index == index }),
                updates[position].stage == .writing
            else {
                violations.append("finishUpdate U\(index): the update does not hold the write turn")
                return
            }
            updates[position].stage = .finished
            let task = updates[position]
            if !failing {
                cache = (task.value, task.value != nil)
                cacheWriter = .update(index)
            }
            if !failing, task.value != nil {
                // Flights that have not started saving must never write after this update.
                for flight in flights.indices
                where [.pending, .fetching, .awaitingWrite].contains(flights[flight].stage.kind) {
                    flights[flight].outrunBy.append(index)
                }
            }
            let emittedBefore = activeSubscribers.keys.map { ($0, log.emissions[$0]?.count ?? 0) }
            let action = machine.finishUpdate(task.id, newData: task.value, error: failing ? Failure.write : nil)
            let event = "finishUpdate U\(index)"
            apply(action, event)
            // Every subscriber that has its first state receives the key's state after the update, exactly once.
            let current = Self.currentState(of: machine)
            for (subscriber, count) in emittedBefore {
                let emitted = log.emissions[subscriber] ?? []
                if emitted.count != count + 1 || emitted.last != current {
                    let state = current.map { "\($0)" } ?? "nothing"
                    violations.append("\(event): \(subscriber) got \(emitted.dropFirst(count)), not once \(state)")
                }
            }
            checkOutcome(of: task, failing: failing, event)
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
                for subscriber in activeSubscribers.keys where log.emissions[subscriber]?.last != .completed(value) {
                    violations.append("\(event): \(subscriber) does not hold completed(\(value))")
                }
            } else if machine.flight == nil, !subscriberIDs.isEmpty || !waiterIDs.isEmpty {
                // A clear fetches for whoever is left, pending subscribers included (never stuck in loading
                // or waiting).
                violations.append("\(event): a clear left subscribers or waiters without a flight")
            }
        }

        // MARK: Freshness and invalidation

        /// A read served a stale-while-revalidate value: the store asks for a background revalidation.
        /// Checks that a flight runs afterwards, is pinned, and is the flight that ran before (if any).
        mutating func revalidate() {
            let before = machine.flight
            let event = "revalidate"
            apply(machine.revalidate(), event)
            guard let flight = machine.flight else {
                violations.append("\(event): no flight runs after a revalidation")
                return
            }
            if !machine.isFlightPinned { violations.append("\(event): \(label(ofFlight: flight.id)) is not pinned") }
            if let before {
                coverage.revalidationsPinningAFlight += 1
                if before.id != flight.id {
                    violations.append(
                        "\(event): replaced \(label(ofFlight: before.id)) by \(label(ofFlight: flight.id))")
                }
            }
        }

        /// `invalidate()` begins: returns the invalidation's index and whether it may mark at once. Checks
        /// that a flight that has not reached the cache is dropped, and that whoever waited for it or
        /// watches the key has a flight again.
        mutating func beginInvalidation() -> (index: Int, mayWriteNow: Bool) {
            let index = nextInvalidation
            nextInvalidation += 1
            let writer = makeWriter("I\(index)")
            let before = machine.flight
            let (id, mayWriteNow, action) = machine.beginInvalidation(writer)
            let begunAt = noteNewID(id, "beginInvalidation")
            invalidations.append(
                InvalidationTask(
                    index: index, id: id, writer: writer, begunAt: begunAt, stage: mayWriteNow ? .marking : .waiting))
            if !mayWriteNow { coverage.queuedInvalidations += 1 }
            let event = "beginInvalidation I\(index)"
            apply(action, event)
            if let before {
                if before.phase == .saving {
                    coverage.invalidationsBehindASave += 1
                    if machine.flight?.id != before.id { violations.append("\(event): dropped a flight that saves") }
                } else {
                    coverage.invalidationsDroppingFlights += 1
                    if machine.flight?.id == before.id {
                        violations.append("\(event): \(label(ofFlight: before.id)), \(before.phase), survived")
                    }
                    if !subscriberIDs.isEmpty || !waiterIDs.isEmpty, machine.flight == nil {
                        violations.append("\(event): the dropped flight was not started again for its audience")
                    }
                }
            }
            return (index, mayWriteNow)
        }

        /// Invalidation `index` finished marking the cache (or failed to, when `failing`). Checks that the
        /// subscribers keep their content, that anyone watching or waiting has a flight, and that the
        /// subscribers with a first state are told `.loading(content)` when a flight starts.
        mutating func finishInvalidation(_ index: Int, failing: Bool = false) {
            guard let position = invalidations.firstIndex(where: { $0.index == index }),
                invalidations[position].stage == .marking
            else {
                violations.append("finishInvalidation I\(index): the invalidation does not hold the write turn")
                return
            }
            invalidations[position].stage = .finished
            invalidations[position].markFailed = failing
            if !failing, cache.value != nil { cache.isValid = false }
            let event = "finishInvalidation I\(index)"
            let contentBefore = machine.content
            let hadFlight = machine.flight != nil
            let emittedBefore = activeSubscribers.keys.map { ($0, log.emissions[$0]?.count ?? 0) }
            apply(machine.finishInvalidation(invalidations[position].id), event)
            if machine.content != contentBefore {
                violations.append(
                    "\(event): content went from \(String(describing: contentBefore)) to \(String(describing: machine.content))"
                )
            }
            if !subscriberIDs.isEmpty || !waiterIDs.isEmpty, machine.flight == nil {
                violations.append("\(event): subscribers or waiters are left without a refetch")
            }
            if !hadFlight, machine.flight != nil {
                for (subscriber, count) in emittedBefore {
                    let emitted = log.emissions[subscriber] ?? []
                    if emitted.count != count + 1 || emitted.last != .loading(contentBefore) {
                        violations.append(
                            "\(event): \(subscriber) got \(emitted.dropFirst(count)), not loading(\(contentBefore ?? "nil"))"
                        )
                    }
                }
            }
        }

        // MARK: Reloads

        /// `reloadFromCache()` begins on a tracked key: returns the reload's index and whether it may read at
        /// once. Checks that every flight not yet writing is dropped (cancelled, its queued write rejected,
        /// a pending one forgotten), that nothing starts, is told or is answered, and that the reload must
        /// mark exactly when a flight is writing.
        mutating func beginReload() -> (index: Int, mayReadNow: Bool) {
            let index = nextReload
            nextReload += 1
            let writer = makeWriter("R\(index)")
            let before = machine.flight
            let owner = machine.writeOwner
            let saving = flights.first { if case .saving = $0.stage { true } else { false } }
            let (id, mayReadNow, mustMark, action) = machine.beginReload(writer)
            let begunAt = noteNewID(id, "beginReload")
            reloads.append(
                ReloadTask(
                    index: index, id: id, writer: writer, begunAt: begunAt, mustMark: mustMark,
                    savingFlight: saving?.index, stage: mayReadNow ? .reading : .waiting))
            if !mayReadNow { coverage.queuedReloads += 1 }
            let event = "beginReload R\(index)"
            let writing: Bool =
                switch owner {
                case .flight?, .page?: true
                case .update?, .invalidation?, .reload?, nil: false
                }
            if mustMark != writing {
                violations.append("\(event): must mark is \(mustMark) with \(String(describing: owner))")
            }
            if mayReadNow != (owner == nil) { violations.append("\(event): may read now is \(mayReadNow)") }
            if action.startFlight != nil || action.emission != nil || action.resolution != nil
                || action.grantWriter != nil
            {
                violations.append("\(event): started, told, answered or granted something")
            }
            apply(action, event)
            if let before {
                if before.phase == .saving {
                    coverage.reloadsBehindASave += 1
                    if machine.flight?.id != before.id { violations.append("\(event): dropped a flight that saves") }
                } else {
                    coverage.reloadsDroppingFlights += 1
                    if machine.flight != nil {
                        violations.append("\(event): \(label(ofFlight: before.id)), \(before.phase), survived")
                    }
                }
            }
            return (index, mayReadNow)
        }

        /// Reload `index` marks the cached value stale (it must: a flight was writing as it began); `mark`
        /// says whether the mark was applied, threw, or does nothing (a cache that keeps no mark).
        mutating func markReload(_ index: Int, _ mark: ReloadTask.Mark) {
            guard let position = reloads.firstIndex(where: { $0.index == index }), reloads[position].stage == .marking
            else {
                violations.append("markReload R\(index): the reload is not marking")
                return
            }
            reloads[position].mark = mark
            reloads[position].stage = .reading
            if mark == .applied, cache.value != nil { cache.isValid = false }
            check("markReload R\(index) \(mark)")
        }

        /// Reload `index` reads the cache; it reports the read later, when the cache may have changed again.
        mutating func readReload(_ index: Int) {
            guard let position = reloads.firstIndex(where: { $0.index == index && $0.stage == .reading }) else {
                violations.append("readReload R\(index): the reload is not reading")
                return
            }
            reloads[position].read = cache
        }

        /// Reload `index` reports its read (reading the cache now if it has not yet). The read counts as
        /// fresh, as the store passes it, only when it found a valid value and the reload did not have to
        /// mark: a value written by a flight that began before the change is never taken as fresh, even
        /// when the cache could not mark it.
        ///
        /// Checks that a fresh read answers every waiter with its value and clears the error unless a flight
        /// started meanwhile (and then answers nobody), that any other read leaves nobody watching or
        /// waiting without a fetch, that the content is what was read, and that every subscriber with a
        /// first state is told the key's state once.
        mutating func finishReload(_ index: Int) {
            guard let position = reloads.firstIndex(where: { $0.index == index }), reloads[position].stage == .reading
            else {
                violations.append("finishReload R\(index): the reload does not hold the write turn")
                return
            }
            let task = reloads[position]
            reloads[position].stage = .finished
            let read = task.read ?? cache
            let isFresh = read.value != nil && read.isValid && !task.mustMark
            let hadFlight = machine.flight != nil
            let hadWaiters = !waiterIDs.isEmpty
            let hadAudience = !subscriberIDs.isEmpty
            let emittedBefore = activeSubscribers.keys.map { ($0, log.emissions[$0]?.count ?? 0) }
            let action = machine.finishReload(task.id, cached: read.value, isFresh: isFresh)
            let event = "finishReload R\(index)"
            if let (waiters, outcome) = action.resolution {
                if !isFresh || hadFlight {
                    violations.append("\(event): answered \(waiters.values.sorted()) with \(Resolution(outcome))")
                } else if let value = read.value, Resolution(outcome) != .value(value) {
                    violations.append("\(event): answered the waiters with \(Resolution(outcome)), not \(value)")
                }
            }
            apply(action, event)
            if hadFlight { coverage.reloadsOvertakenByAFlight += 1 }
            if isFresh {
                if machine.lastError != nil { violations.append("\(event): the error outlived a fresh read") }
                if !hadFlight, hadWaiters {
                    coverage.reloadsAnsweringWaiters += 1
                    if !waiterIDs.isEmpty { violations.append("\(event): waiters outlived a fresh read") }
                }
                if (machine.flight != nil) != hadFlight { violations.append("\(event): a fresh read moved the flight") }
            } else {
                if hadAudience || hadWaiters, machine.flight == nil {
                    violations.append("\(event): subscribers or waiters are left without a fetch")
                }
                if !hadFlight, machine.flight != nil { coverage.reloadsStartingAFetch += 1 }
            }
            if !subscriberIDs.isEmpty, machine.content != read.value {
                violations.append("\(event): content \(String(describing: machine.content)) after reading \(read)")
            }
            let current = Self.currentState(of: machine)
            for (subscriber, count) in emittedBefore {
                let emitted = log.emissions[subscriber] ?? []
                if emitted.count != count + 1 || emitted.last != current {
                    let state = current.map { "\($0)" } ?? "nothing"
                    violations.append("\(event): \(subscriber) got \(emitted.dropFirst(count)), not once \(state)")
                }
            }
            if machine.isWriteOwner(.reload(task.id)) { violations.append("\(event): the reload kept the turn") }
            // The promise of a reload behind a save: the value that save wrote, fetched before the change,
            // is never left as the key's fresh value (served to the waiters or shown as completed).
            if task.mustMark, let flight = task.savingFlight, cacheWriter == .flight(flight), let value = read.value {
                let shown = activeSubscribers.keys.filter { log.emissions[$0]?.last == .completed(value) }
                if action.resolution != nil || !shown.isEmpty {
                    let mark = task.mark.map { "\($0)" } ?? "unmarked"
                    violations.append("\(event): F\(flight)'s value, fetched before the change, is fresh (\(mark))")
                }
            }
        }

        /// The task of flight `index` reports how its origin call ended: `flightReturned` with the value, or
        /// `flightFailed` with the error. A cancelled flight reports too (a flight cancelled before its task
        /// started reports `flightFailed` with a cancellation, without calling the origin); that report
        /// must do nothing but start the flight held back for it, if any.
        mutating func completeFetch(_ index: Int, with result: Result<String, Failure>) {
            guard let position = flights.firstIndex(where: { $0.index == index }),
                flights[position].stage == .fetching
            else {
                violations.append("completeFetch F\(index): the flight is not fetching")
                return
            }
            let task = flights[position]
            flights[position].stage = .finished
            let heldBack = machine.flight.flatMap { $0.phase == .pending ? $0.id : nil }
            switch result {
            case .failure(let error):
                let event = "flightFailed F\(index)"
                let action = machine.flightFailed(task.id, error: error)
                if task.cancelled {
                    checkDrainReport(action, heldBack: heldBack, event)
                } else if action.startFlight != nil || action.cancelFlight != nil {
                    violations.append("\(event): a failed flight started or cancelled another")
                }
                apply(action, event)
            case .success(let value):
                let event = "flightReturned F\(index)"
                let (decision, action) = machine.flightReturned(task.id, writer: task.writer)
                switch decision {
                case .discard:
                    if !task.cancelled { violations.append("\(event): a live flight was discarded") }
                case .write:
                    flights[position].stage = .saving(value)
                    checkMayWrite(flights[position], event)
                case .waitForTurn:
                    flights[position].stage = .awaitingTurn(value)
                }
                if task.cancelled {
                    if decision != .discard { violations.append("\(event): a cancelled flight was told \(decision)") }
                    checkDrainReport(action, heldBack: heldBack, event)
                } else if !action.isEmpty {
                    violations.append("\(event): a live flight's return had effects")
                }
                apply(action, event)
            }
        }

        /// A cancelled flight's report only ends the drain: it starts the flight held back for it, if any.
        private mutating func checkDrainReport(_ action: Machine.Action, heldBack: Machine.ID?, _ event: String) {
            coverage.drainReports += 1
            if heldBack != nil { coverage.startedAfterDrain += 1 }
            var rest = action
            rest.startFlight = nil
            if !rest.isEmpty { violations.append("\(event): a cancelled flight's report had effects") }
            if action.startFlight != heldBack {
                let expected = heldBack.map { "to start \(label(ofFlight: $0))" } ?? "to start nothing"
                violations.append(
                    "\(event): the drain report started \(String(describing: action.startFlight)), \(expected)")
            }
            if machine.draining != nil { violations.append("\(event): the key still drains after the report") }
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
            if !failing, let startedAt = flights[position].fetchStartedAt {
                // An invalidation that began after this flight's origin call started must mark after the save.
                for invalidation in invalidations
                where invalidation.stage == .finished && !invalidation.markFailed && invalidation.begunAt > startedAt {
                    violations.append(
                        "completeSave F\(index): writes a value fetched before I\(invalidation.index), which already marked"
                    )
                }
            }
            if failing {
                apply(machine.flightSaveFailed(id, error: Failure.save), "flightSaveFailed F\(index)")
            } else {
                cache = (value, true)
                cacheWriter = .flight(index)
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
        /// A cancelled flight reports back too: it throws a cancellation when `outcome` is `.fetchFailure`,
        /// and returns its value otherwise (both end its drain).
        mutating func drain(_ outcome: Outcome = .fetchSuccess, failingUpdates: Set<Int> = []) {
            for _ in 0..<1_000 {
                if let update = updates.first(where: { $0.stage == .writing }) {
                    finishUpdate(update.index, failing: failingUpdates.contains(update.index))
                } else if let invalidation = invalidations.first(where: { $0.stage == .marking }) {
                    finishInvalidation(invalidation.index)
                } else if let reload = reloads.first(where: { $0.stage == .marking }) {
                    markReload(reload.index, .applied)
                } else if let reload = reloads.first(where: { $0.stage == .reading }) {
                    finishReload(reload.index)
                } else if let flight = flights.first(where: { if case .saving = $0.stage { true } else { false } }) {
                    completeSave(flight.index, failing: outcome == .saveFailure)
                } else if let flight = flights.first(where: { $0.stage == .fetching }) {
                    let failure: Failure? = outcome == .fetchFailure ? (flight.cancelled ? .cancelled : .fetch) : nil
                    completeFetch(flight.index, with: failure.map { .failure($0) } ?? .success("f\(flight.index)"))
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
            for invalidation in invalidations where invalidation.stage != .finished {
                violations.append("drain: I\(invalidation.index) is stuck in \(invalidation.stage)")
            }
            for reload in reloads where reload.stage != .finished {
                violations.append("drain: R\(reload.index) is stuck in \(reload.stage)")
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
            for update in updates where update.begunAt > flight.createdAt {
                violations.append("\(event): F\(flight.index) writes after U\(update.index), which began after it")
            }
            for update in flight.outrunBy {
                violations.append("\(event): F\(flight.index) writes after U\(update), which finished before it saved")
            }
            // A reload supersedes every flight not yet writing when it begins: such a flight never writes.
            for reload in reloads where reload.begunAt > flight.createdAt {
                violations.append("\(event): F\(flight.index) writes after R\(reload.index), which began after it")
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
            trackFlights(startFlight: action.startFlight, event)
            check(event)
        }

        /// Follows the machine's flights: a new flight gets a task, pending or started; a started flight's
        /// origin call begins; a pending flight the machine dropped is forgotten, and never starts.
        private mutating func trackFlights(startFlight: Machine.ID?, _ event: String) {
            if let flight = machine.flight, !flights.contains(where: { $0.id == flight.id }) {
                let createdAt = noteNewID(flight.id, event)
                let index = nextFlight
                nextFlight += 1
                flights.append(
                    FlightTask(
                        index: index, id: flight.id, writer: makeWriter("F\(index)"), createdAt: createdAt,
                        stage: .pending))
                if startFlight != flight.id { coverage.heldBack += 1 }
            }
            if let id = startFlight {
                if let position = flights.firstIndex(where: { $0.id == id && $0.stage == .pending }) {
                    flights[position].stage = .fetching
                    clock += 1
                    flights[position].fetchStartedAt = clock
                    log.started.append("F\(flights[position].index)")
                } else {
                    violations.append("\(event): started \(label(ofFlight: id)), which is not a pending flight")
                }
            }
            for position in flights.indices where flights[position].stage == .pending {
                if flights[position].id != machine.flight?.id {
                    flights[position].stage = .finished
                    flights[position].forgotten = true
                    coverage.forgotten += 1
                }
            }
        }

        private mutating func cancelFlight(_ id: Machine.ID, _ action: Machine.Action, _ event: String) {
            guard let position = flights.firstIndex(where: { $0.id == id && !$0.cancelled }) else {
                violations.append("\(event): cancelled flight \(id), which is not running")
                return
            }
            let task = flights[position]
            switch task.stage {
            case .pending, .finished:
                violations.append("\(event): cancelled F\(task.index), which is \(task.stage)")
            case .saving:
                violations.append("\(event): cancelled F\(task.index) while it saves")
            case .awaitingTurn:
                if action.rejectWriter != task.writer {
                    violations.append("\(event): cancelled F\(task.index) without rejecting its queued write")
                }
                if machine.draining == id {
                    violations.append("\(event): F\(task.index) drains, but its origin call had returned")
                }
            case .fetching:
                // Its origin call may still run: the key drains until the task reports back.
                if machine.draining != id {
                    violations.append("\(event): F\(task.index) was cancelled but does not drain")
                }
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
                // Promise 7: a flight nobody wants is cancelled, never let through to write. Subscribers still
                // reading their first state want it.
                if subscriberIDs.isEmpty, machine.waiters.isEmpty, !machine.isFlightPinned {
                    violations.append("\(event): granted F\(flights[position].index), which nobody wants")
                }
            } else if let position = updates.firstIndex(where: { $0.writer == writer && $0.stage == .waiting }) {
                updates[position].stage = .writing
            } else if let position = invalidations.firstIndex(where: { $0.writer == writer && $0.stage == .waiting }) {
                invalidations[position].stage = .marking
            } else if let position = reloads.firstIndex(where: { $0.writer == writer && $0.stage == .waiting }) {
                reloads[position].stage = reloads[position].mustMark ? .marking : .reading
            } else {
                violations.append("\(event): granted \(label(ofWriter: writer)), which does not wait for a turn")
                return
            }
            log.granted.append(label(ofWriter: writer))
        }

        /// Records a state sent to subscribers. A subscriber receives nothing before its initial read is
        /// reported; its first state is what its own read sends (the only state ever sent to it alone), or,
        /// when a write in progress dropped its read, the next broadcast.
        private mutating func emit(_ state: LoadingState<String>, to recipients: Machine.Recipients, _ event: String) {
            let rendered = Emitted(state)
            let targets: [Int]
            switch recipients {
            case .one(let subscriber):
                if subscriberIDs[subscriber] == nil { violations.append("\(event): emitted to detached \(subscriber)") }
                if reading != subscriber || received.contains(subscriber) {
                    violations.append("\(event): sent \(rendered) to \(subscriber) alone, which is not its first state")
                }
                targets = [subscriber]
            case .all(let subscribers):
                let active = activeSubscribers
                if subscribers.count != active.count
                    || subscribers.contains(where: { id, subscriber in active[subscriber] != id })
                {
                    violations.append(
                        "\(event): emitted to \(subscribers), the subscribers with a first state are \(active)")
                }
                targets = subscribers.values.sorted()
            }
            for subscriber in targets {
                if pendingReads[subscriber] != nil {
                    violations.append("\(event): \(subscriber) received \(rendered) before its initial read")
                }
                received.insert(subscriber)
                awaitingFirstState.remove(subscriber)
                log.emit(subscriber, rendered)
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
