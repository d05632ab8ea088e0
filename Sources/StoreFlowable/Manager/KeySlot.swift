/// The state a ``FlowableDataStateManager`` keeps for one key and one data type: the pure state
/// machine plus the handle of the flight it is running.
///
/// Only the manager's actor touches a slot, so it needs no lock of its own.
final class KeySlot<Data: Sendable> {
    /// The state machine, instantiated with the concrete things the store waits on.
    typealias Machine = KeyStateMachine<
        Data, OneShot<Data>, AsyncStream<LoadingState<Data>>.Continuation, OneShot<Bool>
    >

    /// The per-key state machine.
    var machine = Machine()
    /// The cancel switch of the running flight; present exactly while `machine.flight` is.
    private var flightHandle: FlightHandle?

    /// Creates the slot of a key nobody has touched.
    init() {}

    /// Turns the machine's action into effects, creating or taking the flight handle it needs.
    ///
    /// No user code runs here: creating a handle allocates, and the task starts only when the effects run.
    func effects(for action: Machine.Action) -> KeyEffects<Data> {
        var effects = KeyEffects<Data>(action: action)
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
        return effects
    }
}
