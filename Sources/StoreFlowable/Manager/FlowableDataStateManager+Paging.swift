/// The events of paged stores: page requests and the steps of a page flight.
extension FlowableDataStateManager {
    func requestPage<Data: Sendable>(
        _ key: Key, _: Data.Type, _ direction: PageDirection, waiter: OneShot<Void>, continueWhenError: Bool
    ) -> (id: UInt64?, effects: KeyEffects<Data>) {
        apply(key, Data.self) { machine in
            machine.requestPage(direction, waiter: waiter, continueWhenError: continueWhenError)
        }
    }

    func leavePage<Data: Sendable>(_ key: Key, _: Data.Type, _ direction: PageDirection, waiter id: UInt64)
        -> KeyEffects<Data>
    {
        guard existingSlot(for: key, Data.self) != nil else { return .none }
        return apply(key, Data.self) { machine in ((), machine.leavePage(direction, waiter: id)) }.1
    }

    func pageReturned<Data: Sendable>(
        _ key: Key, _: Data.Type, _ direction: PageDirection, flight id: UInt64, writer: OneShot<Bool>
    ) -> (decision: KeySlot<Data>.Machine.FetchReturnDecision, effects: KeyEffects<Data>) {
        guard existingSlot(for: key, Data.self) != nil else { return (.discard, .none) }
        return apply(key, Data.self) { machine in machine.pageReturned(direction, id, writer: writer) }
    }

    func pageFailed<Data: Sendable>(
        _ key: Key, _: Data.Type, _ direction: PageDirection, flight id: UInt64, error: (any Error)?
    ) -> KeyEffects<Data> {
        guard existingSlot(for: key, Data.self) != nil else { return .none }
        return apply(key, Data.self) { machine in ((), machine.pageFailed(direction, id, error: error)) }.1
    }

    func pageSaved<Data: Sendable>(_ key: Key, _ direction: PageDirection, flight id: UInt64, data: Data)
        -> KeyEffects<Data>
    {
        apply(key, Data.self) { machine in ((), machine.pageSaved(direction, id, data: data)) }.1
    }

    func pageSaveFailed<Data: Sendable>(
        _ key: Key, _: Data.Type, _ direction: PageDirection, flight id: UInt64, error: any Error
    ) -> KeyEffects<Data> {
        apply(key, Data.self) { machine in ((), machine.pageSaveFailed(direction, id, error: error)) }.1
    }
}

extension FlowableDataStateManager {
    /// The number of callers waiting for the page flight of `direction`, for tests that must know a
    /// request joined before they let the page through.
    func pageWaiterCount<Data: Sendable>(for key: Key, _: Data.Type, _ direction: PageDirection) -> Int {
        existingSlot(for: key, Data.self)?.machine.page(direction).waiters.count ?? 0
    }
}
