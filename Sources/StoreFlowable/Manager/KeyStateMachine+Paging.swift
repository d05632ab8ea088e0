/// Paging: loading the page after (or before) the data, with a single flight per direction.
///
/// A page flight is created only while the data is settled: no main flight (first load or refresh), no
/// update or clear writing or queued, and no remembered failure of the data. Anything that replaces the
/// data afterwards (a main flight starting, an update beginning) supersedes the page flights that have
/// not reached the cache, so a page is never merged into data it was not fetched for. A page that has
/// reached the cache (`.saving`) finishes first; the replacement writes after it.
///
/// A page's result takes the key's write turn like any other write; the store merges it into what the
/// cache holds at that moment, so pages of the two directions can load at the same time.
extension KeyStateMachine {
    /// The load state of `direction`.
    func page(_ direction: PageDirection) -> PageLoad<PageWaiter> {
        switch direction {
        case .next: nextPage
        case .prev: prevPage
        }
    }

    /// Changes the load state of `direction` in place (no copy of its waiters).
    ///
    /// Plain switches rather than key paths: this runs on every unsubscribe, and a key path into a
    /// generic type is instantiated at run time on each use.
    ///
    /// - Parameter body: The change; it must not touch the machine itself.
    /// - Returns: What `body` returns.
    private mutating func modifyPage<Result>(
        _ direction: PageDirection, _ body: (inout PageLoad<PageWaiter>) -> Result
    ) -> Result {
        switch direction {
        case .next: body(&nextPage)
        case .prev: body(&prevPage)
        }
    }

    // MARK: Requests

    /// A caller asks for the page in `direction`: it joins the page flight, or starts one, or is turned
    /// away when the data is not settled or the last page load failed and `continueWhenError` is false.
    ///
    /// - Returns: The waiter's id, or `nil` when the request does nothing (the waiter is not kept), and
    ///   the effects (a page flight to start, `.loading` in that direction to emit).
    mutating func requestPage(_ direction: PageDirection, waiter: PageWaiter, continueWhenError: Bool)
        -> (id: ID?, action: Action)
    {
        guard pageRejection(direction, continueWhenError: continueWhenError) == nil else { return (nil, .none) }
        let id = makeID()
        modifyPage(direction) { $0.waiters[id] = waiter }
        guard page(direction).flight == nil else { return (id, .none) }
        let flightID = makeID()
        var action = Action.none
        modifyPage(direction) { $0.error = nil }
        if page(direction).draining == nil {
            modifyPage(direction) { $0.flight = (flightID, .fetching) }
            action.startPages = [(direction, flightID)]
        } else {
            modifyPage(direction) { $0.flight = (flightID, .pending) }
        }
        announce(into: &action)
        return (id, action)
    }

    /// Why a request for the page in `direction` would be turned away now, or `nil` when it would join
    /// or start the page flight.
    func pageRejection(_ direction: PageDirection, continueWhenError: Bool) -> PageRequestRejection? {
        if flight != nil || hasUpdateInProgress { return .dataBeingReplaced }
        if lastError != nil { return .lastRefreshFailed }
        if page(direction).flight == nil, page(direction).error != nil, !continueWhenError { return .lastPageFailed }
        return nil
    }

    /// Removes a page waiter whose task was cancelled. When nobody waits for the page and no stream is
    /// attached, the page flight is cancelled unless it is already writing.
    mutating func leavePage(_ direction: PageDirection, waiter id: ID) -> Action {
        guard modifyPage(direction, { $0.waiters.removeValue(forKey: id) }) != nil else { return .none }
        guard !hasAudience, page(direction).waiters.isEmpty else { return .none }
        return supersedePage(direction)
    }

    // MARK: Page flight

    /// The origin returned the page of flight `id`: decides whether and when it may be merged.
    ///
    /// - Returns: The decision, and the effects of a cancelled page flight's origin call having returned.
    mutating func pageReturned(_ direction: PageDirection, _ id: ID, writer: Writer)
        -> (decision: FetchReturnDecision, action: Action)
    {
        if page(direction).draining == id { return (.discard, finishPageDraining(direction)) }
        guard let current = page(direction).flight, current.id == id, current.phase == .fetching else {
            return (.discard, .none)
        }
        if writeOwner == nil {
            writeOwner = .page(direction, id)
            modifyPage(direction) { $0.flight = (id, .saving) }
            return (.write, .none)
        }
        modifyPage(direction) { $0.flight = (id, .awaitingWrite) }
        writeQueue.append((.page(direction, id), writer))
        return (.waitForTurn, .none)
    }

    /// Page flight `id` ended before it had a page: the origin (or the cache read before it) threw
    /// `error`, or, with `error` `nil`, the cache held no cursor in that direction, so there was nothing
    /// to fetch.
    mutating func pageFailed(_ direction: PageDirection, _ id: ID, error: (any Error)?) -> Action {
        if page(direction).draining == id { return finishPageDraining(direction) }
        guard let current = page(direction).flight, current.id == id, current.phase == .fetching else {
            return .none
        }
        modifyPage(direction) { $0.flight = nil }
        modifyPage(direction) { $0.error = error }
        return endPage(direction, error.map { .failed($0) } ?? .noMorePages)
    }

    /// Page flight `id` merged its page into the cache, which now holds `data`.
    mutating func pageSaved(_ direction: PageDirection, _ id: ID, data: Data) -> Action {
        precondition(isWriteOwner(.page(direction, id)), "pageSaved for a page that is not saving")
        modifyPage(direction) { $0.flight = nil }
        modifyPage(direction) { $0.error = nil }
        // A paged store's cache has no `maxAge` the store knows of.
        setContent(data, usableUntil: nil)
        version &+= 1
        var action = endPage(direction, .loaded)
        passWriteTurn(into: &action)
        return action
    }

    /// Page flight `id` could not merge its page into the cache; `error` is what the store reports.
    mutating func pageSaveFailed(_ direction: PageDirection, _ id: ID, error: any Error) -> Action {
        precondition(isWriteOwner(.page(direction, id)), "pageSaveFailed for a page that is not saving")
        modifyPage(direction) { $0.flight = nil }
        modifyPage(direction) { $0.error = error }
        var action = endPage(direction, .failed(error))
        passWriteTurn(into: &action)
        return action
    }

    // MARK: Helpers

    /// Releases the waiters of `direction` with `outcome` and tells every subscriber the key's state.
    private mutating func endPage(_ direction: PageDirection, _ outcome: PageOutcome) -> Action {
        var action = Action.none
        action.releasePageWaiters = takePageWaiters(direction)
        action.pageOutcome = outcome
        announce(into: &action)
        return action
    }

    /// Tells every subscriber the key's current state.
    private func announce(into action: inout Action) {
        if !subscribers.isEmpty, let state = currentState { action.emission = (state, .all(subscribers)) }
    }

    private mutating func takePageWaiters(_ direction: PageDirection) -> [PageWaiter] {
        guard !page(direction).waiters.isEmpty else { return [] }
        let taken = Array(page(direction).waiters.values)
        modifyPage(direction) { $0.waiters = [:] }
        return taken
    }

    /// A cancelled page flight's origin call returned: the page flight held back for it may start.
    private mutating func finishPageDraining(_ direction: PageDirection) -> Action {
        modifyPage(direction) { $0.draining = nil }
        guard let current = page(direction).flight, current.phase == .pending else { return .none }
        modifyPage(direction) { $0.flight = (current.id, .fetching) }
        var action = Action.none
        action.startPages = [(direction, current.id)]
        return action
    }

    /// Whether a page flight exists in either direction (the quick check before any page work).
    private var hasPageFlight: Bool { nextPage.flight != nil || prevPage.flight != nil }

    /// Forgets the last page error of both directions (the data they were about is being replaced).
    mutating func forgetPageErrors() {
        nextPage.error = nil
        prevPage.error = nil
    }

    /// Drops the page flights of both directions that have not reached the cache.
    mutating func supersedePages() -> Action {
        guard hasPageFlight else { return .none }
        var action = supersedePage(.next)
        action.merge(supersedePage(.prev))
        return action
    }

    /// Cancels the page flights nobody waits for any more.
    mutating func abandonPagesIfUnwanted() -> Action {
        guard !hasAudience, hasPageFlight else { return .none }
        var action = Action.none
        if nextPage.waiters.isEmpty { action.merge(supersedePage(.next)) }
        if prevPage.waiters.isEmpty { action.merge(supersedePage(.prev)) }
        return action
    }

    /// Drops the page flight of `direction` unless its page is already being written, releasing its
    /// waiters: a flight calling the origin is cancelled (and drains until its call returns), a queued
    /// write is rejected, a pending flight is forgotten.
    private mutating func supersedePage(_ direction: PageDirection) -> Action {
        guard let current = page(direction).flight, current.phase != .saving else { return .none }
        modifyPage(direction) { $0.flight = nil }
        var action = Action.none
        action.releasePageWaiters = takePageWaiters(direction)
        switch current.phase {
        case .pending, .saving:
            break
        case .fetching:
            modifyPage(direction) { $0.draining = current.id }
            action.cancelPages = [(direction, current.id)]
        case .awaitingWrite:
            action.cancelPages = [(direction, current.id)]
            if let index = writeQueue.firstIndex(where: { entry in
                if case .page(direction, current.id) = entry.turn { true } else { false }
            }) {
                action.rejectPageWriters = [writeQueue.remove(at: index).writer]
            }
        }
        return action
    }
}
