/// The events of paged stores: page requests and the steps of a page flight.
extension FlowableDataStateManager {
    /// A caller asks for the page in `direction`.
    ///
    /// - Returns: The waiter's id, or `nil` with the reason when the request was turned away; and the
    ///   effects.
    func requestPage<Data: Sendable>(
        _ key: Key, _: Data.Type, _ direction: PageDirection, waiter: OneShot<PageOutcome>, continueWhenError: Bool
    ) -> (id: UInt64?, effects: KeyEffects, rejection: PageRequestRejection?) {
        var id: UInt64?
        var rejection: PageRequestRejection?
        let effects = apply(key, Data.self) { machine in
            rejection = machine.pageRejection(direction, continueWhenError: continueWhenError)
            guard rejection == nil else { return .none }
            let (requested, action) = machine.requestPage(
                direction, waiter: waiter, continueWhenError: continueWhenError)
            id = requested
            return action
        }
        return (id, effects, rejection)
    }

    /// The state of `direction` as a completed state would report it, before the cursor is known:
    /// `.loading`, `.error`, or `.fixed` for "nothing loading".
    func pageStatus<Data: Sendable>(for key: Key, _: Data.Type, _ direction: PageDirection) -> AdditionalLoadingState {
        existingSlot(for: key, Data.self)?.machine.page(direction).reported ?? .noMoreData
    }

    func leavePage<Data: Sendable>(_ key: Key, _: Data.Type, _ direction: PageDirection, waiter id: UInt64)
        -> KeyEffects
    {
        apply(key, Data.self, creating: false) { machine in machine.leavePage(direction, waiter: id) }
    }

    /// The page of flight `id` came back from the origin.
    ///
    /// - Parameter startVersion: The key's write version when the flight started, if known.
    /// - Returns: The decision; the effects; and whether the flight may merge into the record it read
    ///   after it started: it writes now, and no write completed since it started.
    func pageReturned<Data: Sendable>(
        _ key: Key, _: Data.Type, _ direction: PageDirection, flight id: UInt64, writer: OneShot<Bool>,
        startVersion: UInt64? = nil
    ) -> (decision: KeySlot.Machine.FetchReturnDecision, effects: KeyEffects, readIsCurrent: Bool) {
        var decision = KeySlot.Machine.FetchReturnDecision.discard
        var readIsCurrent = false
        let effects = apply(key, Data.self, creating: false) { machine in
            let (decided, action) = machine.pageReturned(direction, id, writer: writer)
            decision = decided
            readIsCurrent = decided == .write && machine.version == startVersion
            return action
        }
        return (decision, effects, readIsCurrent)
    }

    func pageFailed<Data: Sendable>(
        _ key: Key, _: Data.Type, _ direction: PageDirection, flight id: UInt64, error: (any Error)?
    ) -> KeyEffects {
        apply(key, Data.self, creating: false) { machine in machine.pageFailed(direction, id, error: error) }
    }

    func pageSaved<Data: Sendable>(_ key: Key, _ direction: PageDirection, flight id: UInt64, data: Data)
        -> KeyEffects
    {
        let data: ErasedData = data
        return apply(key, Data.self) { machine in machine.pageSaved(direction, id, data: data) }
    }

    func pageSaveFailed<Data: Sendable>(
        _ key: Key, _: Data.Type, _ direction: PageDirection, flight id: UInt64, error: any Error
    ) -> KeyEffects {
        apply(key, Data.self) { machine in machine.pageSaveFailed(direction, id, error: error) }
    }
}

extension FlowableDataStateManager {
    /// The number of callers waiting for the page flight of `direction`, for tests that must know a
    /// request joined before they let the page through.
    func pageWaiterCount<Data: Sendable>(for key: Key, _: Data.Type, _ direction: PageDirection) -> Int {
        existingSlot(for: key, Data.self)?.machine.page(direction).waiters.count ?? 0
    }
}
