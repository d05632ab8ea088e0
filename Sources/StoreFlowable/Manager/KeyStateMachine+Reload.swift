/// The transitions of a reload: the cache was changed from outside this manager (by another process
/// sharing it, for example), so the key's state is read again from the cache under the write turn.
extension KeyStateMachine {
    /// A reload wants to read the cache again because something outside this manager changed it.
    ///
    /// A flight that has not reached the cache began before the change and may bring an older value: it
    /// is superseded (cancelled, its result never written), and so are the page flights. A flight (or
    /// page) already writing its result writes first, after the change: its value may be older than the
    /// change, so the reload must mark the cached value stale before it reads (`mustMark`).
    ///
    /// Nothing is started here: the reload's own read decides whether a fetch is needed.
    ///
    /// - Returns: The reload's id, whether it may read now (otherwise it waits for its box to be granted;
    ///   reloads are never rejected), whether it must mark the cached value stale first, and the effects.
    mutating func beginReload(_ writer: Writer) -> (id: ID, mayReadNow: Bool, mustMark: Bool, action: Action) {
        let id = makeID()
        let mustMark: Bool
        switch writeOwner {
        case .flight?, .page?: mustMark = true
        case .update?, .invalidation?, .reload?, nil: mustMark = false
        }
        var action = supersedeFlight()
        action.merge(supersedePages())
        forgetPageErrors()
        if writeOwner == nil {
            writeOwner = .reload(id)
            return (id, true, mustMark, action)
        }
        writeQueue.append((.reload(id), writer))
        return (id, false, mustMark, action)
    }

    /// Reload `id` read the cache: `cached` is the value found (`nil` for none, or for one past
    /// `maxAge`), `isFresh` whether it may be served without a fetch, `usableUntil` when it stops being
    /// usable (see ``contentUsableUntil``).
    ///
    /// The read replaces what the key knew of the data. A fresh value clears the key's error, answers
    /// the callers waiting (unless a flight began meanwhile, which they then wait for) and is every
    /// subscriber's new state. Anything else starts a fetch when anyone subscribes or waits; subscribers
    /// see `.loading` with what the cache holds.
    mutating func finishReload(_ id: ID, cached: Data?, isFresh: Bool, usableUntil: CacheTime? = nil) -> Action {
        precondition(isWriteOwner(.reload(id)), "finishReload for a reload that does not hold the turn")
        version &+= 1
        setContent(cached, usableUntil: usableUntil)
        var action = Action.none
        if let cached, isFresh {
            // The cache holds a value as good as a fetch's: a stream reading since the change began shows
            // it, and callers reading meanwhile read again rather than fetch.
            replacedVersion = version
            lastError = nil
            forgetPageErrors()
            if flight == nil, !waiters.isEmpty { action.resolution = (takeWaiters(), .success(cached)) }
        } else if hasAudience || !waiters.isEmpty {
            action.merge(startFlightIfNeeded(announce: false))
        }
        passWriteTurn(into: &action)
        if !subscribers.isEmpty, let state = currentState { action.emission = (state, .all(subscribers)) }
        return action
    }
}
