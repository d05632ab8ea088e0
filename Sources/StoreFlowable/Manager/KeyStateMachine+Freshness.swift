/// The transitions of freshness: a background revalidation that pins its flight, and invalidation, which
/// marks the cached value stale under the key's write turn.
extension KeyStateMachine {
    /// A read found a value to serve at once but due for a refresh (stale-while-revalidate): starts a
    /// flight unless one exists, and pins the flight so that it completes even when nobody waits for it.
    mutating func revalidate() -> Action {
        let action = startFlightIfNeeded()
        pinnedFlight = flight?.id
        return action
    }

    /// Whether the current flight was started or joined by a background revalidation.
    var isFlightPinned: Bool { flight != nil && flight?.id == pinnedFlight }

    /// An invalidation wants to mark the cached value stale, which it does under the write turn so that
    /// no fetch's save or update of the key interleaves with the mark.
    ///
    /// A flight that has not reached the cache may bring a value older than the invalidation: it is
    /// superseded, and a new flight is started for the callers and streams that wait (it starts once the
    /// dropped flight's origin call returned, and writes after the mark). A flight already saving writes
    /// first; the mark then applies to its value.
    ///
    /// - Returns: The invalidation's id, whether it may mark now (otherwise it waits for its box to be
    ///   granted; invalidations are never rejected), and the effects.
    mutating func beginInvalidation(_ writer: Writer) -> (id: ID, mayWriteNow: Bool, action: Action) {
        let id = makeID()
        var action = Action.none
        if let current = flight, current.phase != .saving {
            action = supersedeFlight()
            if hasAudience || !waiters.isEmpty { action.merge(startFlightIfNeeded()) }
        }
        if writeOwner == nil {
            writeOwner = .invalidation(id)
            return (id, true, action)
        }
        writeQueue.append((.invalidation(id), writer))
        return (id, false, action)
    }

    /// Invalidation `id` marked the cached value stale (or failed to): releases the write turn, and
    /// starts a fetch when anyone subscribes or waits; subscribers see `.loading` with their content.
    ///
    /// The version does not move (the data did not change): a subscriber whose cache read began before
    /// the mark and found the value fresh still has a current read, and is attached while the fetch this
    /// starts for it runs (streams still reading count), so its first state is `.loading` with the value.
    mutating func finishInvalidation(_ id: ID) -> Action {
        precondition(
            isWriteOwner(.invalidation(id)), "finishInvalidation for an invalidation that does not hold the turn")
        var action = Action.none
        if hasAudience || !waiters.isEmpty { action = startFlightIfNeeded() }
        passWriteTurn(into: &action)
        return action
    }
}
