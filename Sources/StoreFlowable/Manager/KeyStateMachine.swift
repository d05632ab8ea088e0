/// The per-key state of a store as a pure value: every event is a `mutating` method that updates the
/// state and returns a ``KeyStateMachine/Action`` describing the effects to run, without running any.
///
/// The machine is generic over what it hands back in its actions (`Waiter`, `Subscriber`, `Writer`,
/// `PageWaiter`),
/// so the transition table is tested with plain integers and no concurrency. ``FlowableDataStateManager``
/// instantiates it with one-shot boxes and stream continuations, applies events inside the actor, and
/// runs the returned effects outside it.
///
/// Invariants, checked by the tests of every transition:
/// - `status` is `.loading` exactly while `flight` is non-nil (it is derived, so it cannot drift).
/// - Waiters exist only while a flight exists or a cache write is in progress, so every waiter is
///   eventually resolved.
/// - At most one origin call runs at a time: a cancelled flight whose origin call has not returned yet
///   is `draining`, and the next flight waits (`.pending`) until it has.
/// - At most one cache write (a fetch saving its result, or an update) runs at a time; the others queue
///   in arrival order.
/// - No fetch writes the cache after a successful update that finished before the fetch began saving.
/// - Every subscriber's first state comes from ``initialRead(subscriber:version:cached:isValid:forceRefresh:)``;
///   only then does it receive broadcasts, so it never sees a state twice.
/// - Paging (see `KeyStateMachine+Paging.swift`): at most one page flight per direction, and a page
///   flight that has not reached the cache exists only while no main flight and no update does, so a
///   page is never merged into data a refresh or update replaced.
struct KeyStateMachine<Data: Sendable, Waiter, Subscriber, Writer, PageWaiter> {
    /// Identifies subscribers, waiters, writers and flights of one key. Never reused.
    typealias ID = UInt64

    // MARK: State
    // Only the machine's transitions change its state; those with an internal setter are also changed
    // by the paging transitions in `KeyStateMachine+Paging.swift`, the freshness transitions in
    // `KeyStateMachine+Freshness.swift` and the reload transitions in `KeyStateMachine+Reload.swift`.

    /// The current flight, if any.
    private(set) var flight: (id: ID, phase: FlightPhase)?
    /// A cancelled flight whose origin call has not returned yet.
    private(set) var draining: ID?
    /// The error of the last failed fetch or write; cleared by the next success.
    var lastError: (any Error)?
    /// The value the cache holds as far as the store knows; kept only while subscribers exist. Set
    /// only through ``setContent(_:usableUntil:)``, so that ``contentUsableUntil`` always goes with it.
    private(set) var content: Data?
    /// When ``content`` stops being usable (its `maxAge` passes), by the clock of the store's cache;
    /// `nil` when the store knows no such moment. The effects of an emission carry it, and a `.loading`
    /// or `.error` state is delivered without content once it has passed.
    private(set) var contentUsableUntil: CacheTime?
    /// Bumped each time a cache write completes, so that a stale cache read can be recognised.
    var version: UInt64 = 0
    /// The `version` of the last write that replaced the data (a fetched first page or an update), as
    /// opposed to merging a page into it: only such a write makes a stale read's verdict obsolete.
    var replacedVersion: UInt64 = 0
    /// Callers of `getData`, `requireData`, `validate` and `refresh` waiting for the next outcome.
    private(set) var waiters: [ID: Waiter] = [:]
    /// The `publish()` streams that received their first state and now receive every broadcast.
    private(set) var subscribers: [ID: Subscriber] = [:]
    /// The `publish()` streams attached but still reading the cache for their first state.
    private(set) var pendingSubscribers: [ID: Subscriber] = [:]
    /// Who is writing the cache now.
    var writeOwner: WriteTurn?
    /// Who waits to write the cache, oldest first.
    var writeQueue: [(turn: WriteTurn, writer: Writer)] = []
    /// The last id handed out (ids and versions only grow, also across the lifetimes of a key's state).
    private(set) var lastID: ID = 0
    /// Loading the page after the data.
    var nextPage = PageLoad<PageWaiter>()
    /// Loading the page before the data.
    var prevPage = PageLoad<PageWaiter>()
    /// The flight a background revalidation started or joined: it keeps running when every caller and
    /// stream leaves, so that a stale-while-revalidate read's refresh always completes. It is pinned
    /// while ``flight`` has this id.
    var pinnedFlight: ID?
    /// Whether an update since the last finished one dropped a flight (which an update that ends up
    /// writing nothing must then start again for the callers and streams it was fetching for).
    private(set) var updateDroppedFlight = false

    /// Creates the state of a key nobody has touched.
    ///
    /// - Parameter firstID: A number above every id and version the key's earlier state (released when
    ///   it went idle) handed out, so that a late event meant for that state can never match this one.
    init(firstID: ID = 0) {
        lastID = firstID
        version = firstID
        replacedVersion = firstID
    }

    /// The state the key reports: `.loading` while a flight exists, else the last outcome.
    var status: DataState {
        if flight != nil { return .loading }
        if let lastError { return .error(lastError) }
        return .fixed
    }

    /// Whether the key holds nothing worth keeping: no subscriber, waiter, flight, write, or error.
    var isIdle: Bool { isUnused && !remembersError }

    /// Whether the key holds nothing but a remembered error (of the data or of a page direction).
    var isIdleExceptForError: Bool { isUnused && remembersError }

    private var remembersError: Bool { lastError != nil || nextPage.error != nil || prevPage.error != nil }

    /// Whether nobody uses the key and nothing runs for it.
    private var isUnused: Bool {
        !hasAudience && waiters.isEmpty && flight == nil && draining == nil && writeOwner == nil
            && writeQueue.isEmpty && nextPage.isUnused && prevPage.isUnused
    }

    /// Whether any `publish()` stream is attached, including those still reading their first state.
    var hasAudience: Bool { !subscribers.isEmpty || !pendingSubscribers.isEmpty }

    /// Keeps `data` as the content subscribers are shown, with the moment it stops being usable, or
    /// forgets the content when nobody subscribes.
    mutating func setContent(_ data: Data?, usableUntil: CacheTime?) {
        let kept = hasAudience ? data : nil
        content = kept
        contentUsableUntil = kept == nil ? nil : usableUntil
    }

    mutating func makeID() -> ID {
        lastID &+= 1
        return lastID
    }

    // MARK: Subscribers

    /// Attaches a `publish()` stream. It receives nothing until its
    /// ``initialRead(subscriber:version:cached:isValid:forceRefresh:)``, which sends its first state.
    ///
    /// - Returns: The subscriber's id and the version its cache read must be checked against.
    mutating func subscribe(_ subscriber: Subscriber) -> (id: ID, version: UInt64) {
        let id = makeID()
        pendingSubscribers[id] = subscriber
        return (id, version)
    }

    /// Reports what a new subscriber read from the cache: sends its first state and decides whether to
    /// fetch. `usableUntil` is when the value read stops being usable (see ``contentUsableUntil``), and
    /// `now` the time by the same clock, when the store knows them.
    ///
    /// A read that found nothing valid starts a fetch unless a write that replaces the data (a fetched
    /// first page or an update) completed since the subscriber attached, is in progress, or is queued:
    /// merging a page does not make stale data fresh. Otherwise, when a cache write completed since the
    /// subscriber attached, the read may be outdated: the subscriber gets the key's current state
    /// instead; when a write is in progress, its outcome will be the subscriber's first state. In both
    /// cases only `forceRefresh` starts a fetch.
    mutating func initialRead(
        subscriber id: ID, version readVersion: UInt64, cached: Data?, isValid: Bool, forceRefresh: Bool,
        usableUntil: CacheTime? = nil, now: CacheTime? = nil
    ) -> Action {
        guard let subscriber = pendingSubscribers.removeValue(forKey: id) else { return .none }
        subscribers[id] = subscriber
        let readIsCurrent = readVersion == version
        if readIsCurrent { setContent(cached, usableUntil: usableUntil) }
        if cached == nil || !isValid, replacedVersion <= readVersion, flight == nil, !hasUpdateInProgress {
            // The read found nothing valid, and nothing has replaced the data since or is about to: a page
            // written meanwhile only merged into the stale data. Fetch, as for any stale read.
            return startFlightIfNeeded()
        }
        if writeOwner != nil {
            return forceRefresh ? startFlightIfNeeded() : .none
        }
        if !readIsCurrent {
            if let now, let until = contentUsableUntil, now >= until {
                // The write that overtook the read left a value that has passed `maxAge` since: never
                // show it; fetch, as for an empty read.
                setContent(nil, usableUntil: nil)
                if flight == nil { return startFlightIfNeeded() }
            }
            if forceRefresh, flight == nil { return startFlightIfNeeded() }
            guard let state = currentState else {
                // Nothing to show (an error reset after a failed fetch for an emptied cache): fetch, as
                // for an empty cache, so that the subscriber is not left without a state.
                return startFlightIfNeeded()
            }
            return Action(emission: (state, .one(subscriber)))
        }
        if flight != nil {
            return Action(emission: (.loading(content: cached), .one(subscriber)))
        }
        guard let cached, isValid, !forceRefresh else { return startFlightIfNeeded() }
        return Action(emission: (state(with: cached), .one(subscriber)))
    }

    /// Detaches a `publish()` stream. When nobody is left, a fetch that has not reached the cache is
    /// cancelled.
    mutating func unsubscribe(_ id: ID) -> Action {
        guard subscribers.removeValue(forKey: id) != nil || pendingSubscribers.removeValue(forKey: id) != nil
        else { return .none }
        if !hasAudience { setContent(nil, usableUntil: nil) }
        var action = abandonFlightIfUnwanted()
        action.merge(abandonPagesIfUnwanted())
        return action
    }

    // MARK: Waiters

    /// Adds a caller that waits for fresh data, starting a flight if none exists.
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

    /// The origin returned a value for flight `id`: decides whether and when it may be written.
    ///
    /// - Returns: The decision, and the effects of a cancelled flight's origin call having returned
    ///   (the pending flight it held back starts).
    mutating func flightReturned(_ id: ID, writer: Writer) -> (decision: FetchReturnDecision, action: Action) {
        if draining == id { return (.discard, finishDraining()) }
        guard let current = flight, current.id == id, current.phase == .fetching else { return (.discard, .none) }
        if writeOwner == nil {
            writeOwner = .flight(id)
            flight = (id, .saving)
            return (.write, .none)
        }
        flight = (id, .awaitingWrite)
        writeQueue.append((.flight(id), writer))
        return (.waitForTurn, .none)
    }

    /// Flight `id` failed in the origin (or a cancelled flight's origin call ended by throwing).
    mutating func flightFailed(_ id: ID, error: any Error) -> Action {
        if draining == id { return finishDraining() }
        guard let current = flight, current.id == id, current.phase == .fetching else { return .none }
        flight = nil
        lastError = error
        return settle(with: .failure(error))
    }

    /// Flight `id` wrote `data` to the cache; `usableUntil` is when it stops being usable (see
    /// ``contentUsableUntil``).
    mutating func flightSaved(_ id: ID, data: Data, usableUntil: CacheTime? = nil) -> Action {
        precondition(flight?.id == id && flight?.phase == .saving, "flightSaved for a flight that is not saving")
        flight = nil
        lastError = nil
        forgetPageErrors()
        setContent(data, usableUntil: usableUntil)
        version &+= 1
        replacedVersion = version
        var action = settle(with: .success(data))
        passWriteTurn(into: &action)
        return action
    }

    /// Flight `id` could not write its result to the cache; `error` is what the store reports.
    mutating func flightSaveFailed(_ id: ID, error: any Error) -> Action {
        precondition(
            flight?.id == id && flight?.phase == .saving, "flightSaveFailed for a flight that is not saving")
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
        if let current = flight, current.phase != .saving { updateDroppedFlight = true }
        var action = supersedeFlight()
        action.merge(supersedePages())
        forgetPageErrors()
        if writeOwner == nil {
            writeOwner = .update(id)
            return (id, true, action)
        }
        writeQueue.append((.update(id), writer))
        return (id, false, action)
    }

    /// Update `id` finished writing `newData` (or failed to, with `error`); `usableUntil` is when
    /// `newData` stops being usable (see ``contentUsableUntil``).
    ///
    /// A successful non-nil update wins over a flight that started while it was writing: that flight is
    /// cancelled and its waiters receive `newData`. A successful `nil` update starts a flight when anyone
    /// subscribes or waits. A failed update is remembered as the key's error and handed to the waiters.
    mutating func finishUpdate(_ id: ID, newData: Data?, error: (any Error)?, usableUntil: CacheTime? = nil)
        -> Action
    {
        precondition(isWriteOwner(.update(id)), "finishUpdate for an update that does not hold the write turn")
        updateDroppedFlight = false
        var action = Action.none
        if let error {
            lastError = error
            if !waiters.isEmpty { action.resolution = (takeWaiters(), .failure(error)) }
        } else {
            version &+= 1
            replacedVersion = version
            lastError = nil
            forgetPageErrors()
            setContent(newData, usableUntil: usableUntil)
            if let newData {
                action = supersedeFlight()
                if !waiters.isEmpty { action.resolution = (takeWaiters(), .success(newData)) }
            } else if hasAudience || !waiters.isEmpty {
                action.merge(startFlightIfNeeded(announce: false))
            }
        }
        // Abandon before passing the turn, so that a flight nobody wants is never granted the write.
        action.merge(abandonFlightIfUnwanted())
        passWriteTurn(into: &action)
        if !subscribers.isEmpty, let state = currentState { action.emission = (state, .all(subscribers)) }
        return action
    }

    /// Update `id` wrote nothing (its transform or its read of the current value threw): the cache and
    /// the key's error are unchanged. A flight the update dropped is started again for the callers and
    /// streams it was fetching for, so nobody is left waiting or loading.
    mutating func finishUpdateUnchanged(_ id: ID) -> Action {
        precondition(
            isWriteOwner(.update(id)), "finishUpdateUnchanged for an update that does not hold the write turn")
        var action = Action.none
        if updateDroppedFlight, hasAudience || !waiters.isEmpty {
            action.merge(startFlightIfNeeded())
        }
        updateDroppedFlight = false
        passWriteTurn(into: &action)
        return action
    }

    // MARK: Helpers

    /// The state every subscriber should hold now, or `nil` when there is nothing to show.
    var currentState: LoadingState<Data>? {
        if flight != nil { return .loading(content: content) }
        if let lastError { return .error(content: content, rawError: lastError) }
        return content.map { state(with: $0) }
    }

    /// The state of the key, with no flight running, for `content`: failed if a failure is remembered,
    /// else completed with each page direction's state.
    private func state(with content: Data) -> LoadingState<Data> {
        if let lastError { return .error(content: content, rawError: lastError) }
        return .completed(content: content, next: nextPage.reported, prev: prevPage.reported)
    }

    func isWriteOwner(_ turn: WriteTurn) -> Bool {
        switch (writeOwner, turn) {
        case (.update(let a)?, .update(let b)): a == b
        case (.flight(let a)?, .flight(let b)): a == b
        case (.page(let d1, let a)?, .page(let d2, let b)): d1 == d2 && a == b
        case (.invalidation(let a)?, .invalidation(let b)): a == b
        case (.reload(let a)?, .reload(let b)): a == b
        default: false
        }
    }

    /// Whether something that replaces the data is writing the cache or waiting to: an update, a clear,
    /// or a reload after a change made elsewhere (which replaces what the key knows of the data).
    var hasUpdateInProgress: Bool {
        if let writeOwner, Self.replacesData(writeOwner) { return true }
        return writeQueue.contains { entry in Self.replacesData(entry.turn) }
    }

    private static func replacesData(_ turn: WriteTurn) -> Bool {
        switch turn {
        case .update, .reload: true
        case .flight, .page, .invalidation: false
        }
    }

    mutating func takeWaiters() -> [ID: Waiter] {
        let taken = waiters
        waiters = [:]
        return taken
    }

    /// Creates a flight unless one exists. Its origin call starts now, or once a cancelled flight's
    /// origin call has returned. With `announce`, every subscriber is told `.loading`.
    mutating func startFlightIfNeeded(announce: Bool = true) -> Action {
        guard flight == nil else { return .none }
        let id = makeID()
        // The first page is about to replace the data: pages loading for the old data are dropped.
        var action = supersedePages()
        forgetPageErrors()
        if draining == nil {
            flight = (id, .fetching)
            action.startFlight = id
        } else {
            flight = (id, .pending)
        }
        if announce, !subscribers.isEmpty { action.emission = (.loading(content: content), .all(subscribers)) }
        return action
    }

    /// A cancelled flight's origin call returned: the flight held back for it may start.
    private mutating func finishDraining() -> Action {
        draining = nil
        guard let current = flight, current.phase == .pending else { return .none }
        flight = (current.id, .fetching)
        return Action(startFlight: current.id)
    }

    /// Resolves every waiter and tells every subscriber after a flight ended.
    private mutating func settle(with outcome: Result<Data, any Error>) -> Action {
        var action = Action.none
        if !waiters.isEmpty { action.resolution = (takeWaiters(), outcome) }
        if !subscribers.isEmpty {
            switch outcome {
            case .success(let data): action.emission = (state(with: data), .all(subscribers))
            case .failure(let error):
                action.emission = (.error(content: content, rawError: error), .all(subscribers))
            }
        }
        return action
    }

    /// Releases the write turn and hands it to the oldest queued writer.
    mutating func passWriteTurn(into action: inout Action) {
        writeOwner = nil
        guard !writeQueue.isEmpty else { return }
        let next = writeQueue.removeFirst()
        writeOwner = next.turn
        switch next.turn {
        case .flight(let id): flight = (id, .saving)
        case .page(.next, let id): nextPage.flight = (id, .saving)
        case .page(.prev, let id): prevPage.flight = (id, .saving)
        case .update, .invalidation, .reload: break
        }
        action.grantWriter = next.writer
    }

    /// Cancels a flight nobody waits for any more, unless its result is already being written.
    private mutating func abandonFlightIfUnwanted() -> Action {
        guard !hasAudience, waiters.isEmpty, !isFlightPinned else { return .none }
        return supersedeFlight()
    }

    /// Drops the flight unless its result is already being written: a flight calling the origin is
    /// cancelled (and drains until its call returns), a queued write is rejected, a pending flight is
    /// forgotten.
    mutating func supersedeFlight() -> Action {
        guard let current = flight, current.phase != .saving else { return .none }
        flight = nil
        switch current.phase {
        case .pending, .saving:
            return .none
        case .fetching:
            draining = current.id
            return Action(cancelFlight: current.id)
        case .awaitingWrite:
            var action = Action(cancelFlight: current.id)
            if let index = writeQueue.firstIndex(where: { entry in
                if case .flight(let id) = entry.turn { id == current.id } else { false }
            }) {
                action.rejectWriter = writeQueue.remove(at: index).writer
            }
            return action
        }
    }
}

extension KeyStateMachine {
    /// Forgets the remembered errors (of the data and of both page directions); a running flight and
    /// the subscribers are unaffected.
    mutating func clearError() {
        lastError = nil
        forgetPageErrors()
    }
}
