/// The state a ``FlowableDataStateManager`` keeps for one key and one data type: the pure state
/// machine plus the handle of the flight it is running.
///
/// Only the manager's actor touches a slot, so it needs no lock of its own. The slot is the same type
/// for every data type (see ``ErasedData``), so the machine it runs is compiled for concrete types.
final class KeySlot {
    /// The state machine, instantiated with the concrete things the store waits on.
    typealias Machine = KeyStateMachine<
        ErasedData, OneShot<ErasedData>, Subscription, OneShot<Bool>, OneShot<PageOutcome>
    >

    /// The per-key state machine.
    var machine: Machine
    /// The cancel switch of the running flight; present exactly while `machine.flight` is.
    private var flightHandle: FlightHandle?
    /// The cancel switches of the running page flights, by direction; present exactly while the
    /// machine's page flight of that direction is.
    private var pageHandles: [PageDirection: FlightHandle] = [:]
    /// The sequence number of the last emission, so subscriptions can drop emissions that arrive late.
    private var lastEmission: UInt64 = 0
    /// The manager's ``WriteEpoch`` right after the last write that replaced this key's data, or 0 when
    /// none did while the slot existed.
    var replacedEpoch: UInt64 = 0

    /// Creates the slot of a key nobody has touched.
    ///
    /// - Parameter firstID: Above every id the key's earlier slots handed out.
    init(firstID: UInt64) {
        machine = Machine(firstID: firstID)
    }

    /// Turns the machine's action into effects, creating or taking the flight handle it needs.
    ///
    /// No user code runs here: creating a handle allocates, and the task starts only when the effects run.
    func effects(for action: Machine.Action) -> KeyEffects {
        var effects = KeyEffects(action: action)
        if action.emission != nil {
            lastEmission &+= 1
            effects.emissionSequence = lastEmission
            // Every state the machine emits shows its current content.
            effects.contentUsableUntil = machine.contentUsableUntil
        }
        if action.cancelFlight != nil {
            effects.flightToCancel = flightHandle
            flightHandle = nil
        }
        if let id = action.startFlight {
            let handle = FlightHandle()
            flightHandle = handle
            effects.flightToStart = (id, handle)
        }
        if machine.flight == nil { flightHandle = nil }
        for (direction, _) in action.cancelPages {
            if let handle = pageHandles.removeValue(forKey: direction) { effects.pagesToCancel.append(handle) }
        }
        for (direction, id) in action.startPages {
            let handle = FlightHandle()
            pageHandles[direction] = handle
            effects.pagesToStart.append((direction, id, machine.version, handle))
        }
        if !pageHandles.isEmpty {
            for direction in PageDirection.allCases where machine.page(direction).flight == nil {
                pageHandles[direction] = nil
            }
        }
        return effects
    }
}

extension KeySlot {
    /// The highest id or version the slot's machine handed out.
    var highestIssuedID: UInt64 { max(machine.lastID, machine.version) }
}
