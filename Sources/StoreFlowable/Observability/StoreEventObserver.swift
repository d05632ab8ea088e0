/// Receives the ``StoreEvent``s of the stores of a ``FlowableDataStateManager`` (and of a
/// ``BatchedOrigin``): the hook for metrics, logs and traces, with no dependency on any metrics or
/// logging package.
///
/// Pass one to ``FlowableDataStateManager/init(rememberedErrorLimit:fetchPolicy:observer:)``.
///
/// The store calls ``observe(_:)`` synchronously, on the task where the event happens (the caller's
/// task for a cache read, the fetch's task for a fetch), never inside the state manager and never
/// under one of the library's locks, possibly from many tasks at once. Keep it short and thread-safe:
/// the call is on the path of the read or fetch it reports. It may call back into the library, but not
/// wait for a fetch of the key it reports on from inside a fetch event (that is a callback of the key:
/// see `Docs/ConcurrencyGuarantees.md`). With no observer set, reporting costs one nil check.
public protocol StoreEventObserver: Sendable {
    /// Receives one event.
    ///
    /// - Parameter event: What happened, and to which key.
    func observe(_ event: StoreEvent)
}
