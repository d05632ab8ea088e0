/// The per-key state of a store as a pure value: every event is a `mutating` method that updates the
/// state and returns a ``KeyStateMachine/Action`` describing the effects to run, without running any.
///
/// The machine is generic over what it hands back in its actions (`Waiter`, `Subscriber`, `Writer`),
/// so the transition table is tested with plain integers and no concurrency. ``FlowableDataStateManager``
/// instantiates it with one-shot boxes and stream continuations, applies events inside the actor, and
/// runs the returned effects outside it.
///
/// Invariants, checked by the tests of every transition:
/// - `status` is `.loading` exactly while `flight` is non-nil (it is derived, so it cannot drift).
/// - Waiters exist only while a flight is running or a cache write is in progress, so every waiter is
///   eventually resolved.
/// - At most one cache write (a fetch saving its result, or an update) runs at a time; the others queue
///   in arrival order.
/// - A fetch that started before an update began never writes the cache after it.
struct KeyStateMachine<Data: Sendable, Waiter, Subscriber, Writer> {
    /// Identifies subscribers, waiters, writers and flights of one key. Never reused.
    typealias ID = UInt64

    /// Where the single origin fetch of the key is.
    enum FlightPhase: Equatable {
        /// The origin is being called.
        case fetching
        /// The origin returned; the result waits for its turn to write the cache.
        case awaitingWrite
        /// The result is being written to the cache; this can no longer be superseded.
        case saving
    }

    /// Who holds, or waits for, the cache-write turn.
    enum WriteTurn {
        case flight(ID)
        case update(ID)
    }

    /// Who receives an emitted state.
    enum Recipients {
        case one(Subscriber)
        case all([ID: Subscriber])
    }

    /// The effects of one transition, run by the caller after it leaves the critical region.
    struct Action {
        /// A state to yield to subscribers.
        var emission: (state: LoadingState<Data>, to: Recipients)?
        /// Waiters to resolve, with the outcome to hand them.
        var resolution: (waiters: [ID: Waiter], outcome: Result<Data, any Error>)?
        /// A flight to start (the origin fetch), by id.
        var startFlight: ID?
        /// A flight to cancel, by id; its result will be ignored.
        var cancelFlight: ID?
        /// A writer whose turn has come.
        var grantWriter: Writer?
        /// A writer that was superseded and must not write.
        var rejectWriter: Writer?

        /// An action with no effect.
        static var none: Action { Action() }

        /// Adds the flight cancellation and writer rejection of `other` to this action.
        mutating func merge(_ other: Action) {
            if let cancel = other.cancelFlight { cancelFlight = cancel }
            if let reject = other.rejectWriter { rejectWriter = reject }
        }

        /// Whether running this action would do nothing.
        var isEmpty: Bool {
            emission == nil && resolution == nil && startFlight == nil && cancelFlight == nil
                && grantWriter == nil && rejectWriter == nil
        }
    }

    /// What the fetch task does after the origin returned a value.
    enum FetchReturnDecision {
        /// The flight was cancelled or superseded: drop the value.
        case discard
        /// Write the value to the cache now.
        case write
        /// Wait for the writer box to be granted, then write (or drop it if rejected).
        case waitForTurn
    }

    // MARK: State

    /// The current flight, if any.
    private(set) var flight: (id: ID, phase: FlightPhase)?
    /// The error of the last failed fetch or write; cleared by the next success.
    private(set) var lastError: (any Error)?
    /// The value the cache holds as far as the store knows; kept only while subscribers exist.
    private(set) var content: Data?
    /// Bumped each time a cache write completes, so that a stale cache read can be recognised.
    private(set) var version: UInt64 = 0
    /// Callers of `getData`, `requireData`, `validate` and `refresh` waiting for the next outcome.
    private(set) var waiters: [ID: Waiter] = [:]
    /// The `publish()` streams attached to the key.
    private(set) var subscribers: [ID: Subscriber] = [:]
    /// Who is writing the cache now.
    private(set) var writeOwner: WriteTurn?
    /// Who waits to write the cache, oldest first.
    private(set) var writeQueue: [(turn: WriteTurn, writer: Writer)] = []
    private var lastID: ID = 0

    /// Creates the state of a key nobody has touched.
    init() {}

    /// The state the key reports: `.loading` while a flight exists, else the last outcome.
    var status: DataState {
        if flight != nil { return .loading }
        if let lastError { return .error(lastError) }
        return .fixed
    }

    /// Whether the key holds nothing worth keeping: no subscriber, waiter, flight, write, or error.
    var isIdle: Bool {
        subscribers.isEmpty && waiters.isEmpty && flight == nil && writeOwner == nil
            && writeQueue.isEmpty && lastError == nil
    }

    /// Whether the key holds nothing but a remembered error.
    var isIdleExceptForError: Bool {
        subscribers.isEmpty && waiters.isEmpty && flight == nil && writeOwner == nil
            && writeQueue.isEmpty && lastError != nil
    }

    private mutating func makeID() -> ID {
        lastID &+= 1
        return lastID
    }

    // MARK: Subscribers

    /// Attaches a `publish()` stream. Nothing is emitted until ``initialRead(subscriber:version:cached:isValid:forceRefresh:)``.
    ///
    /// - Returns: The subscriber's id and the version its cache read must be checked against.
    mutating func subscribe(_ subscriber: Subscriber) -> (id: ID, version: UInt64) {
        let id = makeID()
        subscribers[id] = subscriber
        return (id, version)
    }

    /// Reports what a new subscriber read from the cache, and decides its first state and whether to fetch.
    ///
    /// When a cache write completed or is in progress since the subscriber attached, the read may be
    /// stale: that write has emitted, or will emit, a newer state to the subscriber, so the read is
    /// dropped (only `forceRefresh` still starts a fetch).
    mutating func initialRead(
        subscriber id: ID, version readVersion: UInt64, cached: Data?, isValid: Bool, forceRefresh: Bool
    ) -> Action {
        guard let subscriber = subscribers[id] else { return .none }
        guard readVersion == version else {
            return forceRefresh ? startFlightIfNeeded() : .none
        }
        content = cached
        guard writeOwner == nil else {
            return forceRefresh ? startFlightIfNeeded() : .none
        }
        if flight != nil {
            return Action(emission: (.loading(content: cached), .one(subscriber)))
        }
        if forceRefresh || !isValid {
            return startFlightIfNeeded()
        }
        guard let cached else { return startFlightIfNeeded() }
        if let lastError {
            return Action(emission: (.error(content: cached, rawError: lastError), .one(subscriber)))
        }
        return Action(emission: (.completed(cached), .one(subscriber)))
    }

    /// Detaches a `publish()` stream. When nobody is left, a fetch that has not reached the cache is
    /// cancelled.
    mutating func unsubscribe(_ id: ID) -> Action {
        guard subscribers.removeValue(forKey: id) != nil else { return .none }
        if subscribers.isEmpty { content = nil }
        return abandonFlightIfUnwanted()
    }

    // MARK: Waiters

    /// Adds a caller that waits for fresh data, starting a flight if none is running.
    ///
    /// - Returns: The waiter's id and the effects (a flight to start, `.loading` to emit).
    mutating func join(_ waiter: Waiter) -> (id: ID, action: Action) {
        let id = makeID()
        waiters[id] = waiter
        return (id, startFlightIfNeeded())
    }

    /// Removes a waiter whose task was cancelled. When nobody is left, a fetch that has not reached the
    /// cache is cancelled.
    mutating func leave(_ id: ID) -> Action {
        guard waiters.removeValue(forKey: id) != nil else { return .none }
        return abandonFlightIfUnwanted()
    }

    // MARK: Flight

    /// The origin returned `data` for flight `id`: decides whether and when it may be written.
    mutating func flightReturned(_ id: ID, writer: Writer) -> FetchReturnDecision {
        guard let current = flight, current.id == id, current.phase == .fetching else { return .discard }
        if writeOwner == nil {
            writeOwner = .flight(id)
            flight = (id, .saving)
            return .write
        }
        flight = (id, .awaitingWrite)
        writeQueue.append((.flight(id), writer))
        return .waitForTurn
    }

    /// Flight `id` failed in the origin (or was cancelled by its own code).
    mutating func flightFailed(_ id: ID, error: any Error) -> Action {
        guard let current = flight, current.id == id, current.phase == .fetching else { return .none }
        flight = nil
        lastError = error
        return settle(with: .failure(error))
    }

    /// Flight `id` wrote `data` to the cache.
    mutating func flightSaved(_ id: ID, data: Data) -> Action {
        precondition(flight?.id == id && flight?.phase == .saving, "flightSaved for a flight that is not saving")
        flight = nil
        lastError = nil
        content = hasSubscribers ? data : nil
        version &+= 1
        var action = settle(with: .success(data))
        passWriteTurn(into: &action)
        return action
    }

    /// Flight `id` could not write its result to the cache; `error` is what the store reports.
    mutating func flightSaveFailed(_ id: ID, error: any Error) -> Action {
        precondition(flight?.id == id && flight?.phase == .saving, "flightSaveFailed for a flight that is not saving")
        flight = nil
        lastError = error
        var action = settle(with: .failure(error))
        passWriteTurn(into: &action)
        return action
    }

    // MARK: Updates

    /// An update (or clear) wants to write the cache. A flight that has not reached the cache is
    /// superseded: cancelled, and its result will never be written.
    ///
    /// - Returns: The writer's id, whether it may write now (otherwise it waits for its box to be
    ///   granted), and the effects.
    mutating func beginUpdate(_ writer: Writer) -> (id: ID, mayWriteNow: Bool, action: Action) {
        let id = makeID()
        let action = supersedeFlight()
        if writeOwner == nil {
            writeOwner = .update(id)
            return (id, true, action)
        }
        writeQueue.append((.update(id), writer))
        return (id, false, action)
    }

    /// Update `id` finished writing `newData` (or failed to, with `error`).
    ///
    /// A successful non-nil update wins over a flight that started while it was writing: that flight is
    /// cancelled and its waiters receive `newData`. A successful `nil` update starts a flight when anyone
    /// subscribes or waits. A failed update is remembered as the key's error and handed to the waiters.
    mutating func finishUpdate(_ id: ID, newData: Data?, error: (any Error)?) -> Action {
        precondition(isWriteOwner(.update(id)), "finishUpdate for an update that does not hold the write turn")
        var action = Action.none
        if let error {
            lastError = error
            if !waiters.isEmpty { action.resolution = (takeWaiters(), .failure(error)) }
        } else {
            version &+= 1
            lastError = nil
            content = hasSubscribers ? newData : nil
            if let newData {
                action = supersedeFlight()
                if !waiters.isEmpty { action.resolution = (takeWaiters(), .success(newData)) }
            } else if flight == nil, hasSubscribers || !waiters.isEmpty {
                action.startFlight = beginFlight()
            }
        }
        // Abandon before passing the turn, so that a flight nobody wants is never granted the write.
        action.merge(abandonFlightIfUnwanted())
        passWriteTurn(into: &action)
        if hasSubscribers, let state = currentState { action.emission = (state, .all(subscribers)) }
        return action
    }

    // MARK: Helpers

    private var hasSubscribers: Bool { !subscribers.isEmpty }

    /// The state every subscriber should hold now, or `nil` when there is nothing to show.
    private var currentState: LoadingState<Data>? {
        if flight != nil { return .loading(content: content) }
        if let lastError { return .error(content: content, rawError: lastError) }
        return content.map { .completed($0) }
    }

    private func isWriteOwner(_ turn: WriteTurn) -> Bool {
        switch (writeOwner, turn) {
        case (.update(let a)?, .update(let b)): a == b
        case (.flight(let a)?, .flight(let b)): a == b
        default: false
        }
    }

    private mutating func takeWaiters() -> [ID: Waiter] {
        let taken = waiters
        waiters = [:]
        return taken
    }

    private mutating func beginFlight() -> ID {
        let id = makeID()
        flight = (id, .fetching)
        return id
    }

    /// Starts a flight unless one is running; announces `.loading` to every subscriber when it does.
    private mutating func startFlightIfNeeded() -> Action {
        guard flight == nil else { return .none }
        var action = Action(startFlight: beginFlight())
        if hasSubscribers { action.emission = (.loading(content: content), .all(subscribers)) }
        return action
    }

    /// Resolves every waiter and tells every subscriber after a flight ended.
    private mutating func settle(with outcome: Result<Data, any Error>) -> Action {
        var action = Action.none
        if !waiters.isEmpty { action.resolution = (takeWaiters(), outcome) }
        if hasSubscribers {
            switch outcome {
            case .success(let data): action.emission = (.completed(data), .all(subscribers))
            case .failure(let error): action.emission = (.error(content: content, rawError: error), .all(subscribers))
            }
        }
        return action
    }

    /// Releases the write turn and hands it to the oldest queued writer.
    private mutating func passWriteTurn(into action: inout Action) {
        writeOwner = nil
        guard !writeQueue.isEmpty else { return }
        let next = writeQueue.removeFirst()
        writeOwner = next.turn
        if case .flight(let id) = next.turn { flight = (id, .saving) }
        action.grantWriter = next.writer
    }

    /// Cancels a flight nobody waits for any more, unless its result is already being written.
    private mutating func abandonFlightIfUnwanted() -> Action {
        guard subscribers.isEmpty, waiters.isEmpty else { return .none }
        return supersedeFlight()
    }

    /// Cancels the flight unless its result is already being written, and drops its queued write.
    private mutating func supersedeFlight() -> Action {
        guard let current = flight, current.phase != .saving else { return .none }
        flight = nil
        var action = Action(cancelFlight: current.id)
        if current.phase == .awaitingWrite,
            let index = writeQueue.firstIndex(where: { entry in
                if case .flight(let id) = entry.turn { id == current.id } else { false }
            })
        {
            action.rejectWriter = writeQueue.remove(at: index).writer
        }
        return action
    }
}

extension KeyStateMachine {
    /// Forgets the remembered error; a running flight and the subscribers are unaffected.
    mutating func clearError() {
        lastError = nil
    }
}

extension KeyStateMachine.Recipients: Sendable where Subscriber: Sendable {}

extension KeyStateMachine.Action: Sendable where Waiter: Sendable, Subscriber: Sendable, Writer: Sendable {}
