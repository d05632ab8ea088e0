public import StoreFlowable

/// Hands every store event to each of its observers, in order: a manager has one observer, and the
/// service sends its events both to metrics (`MetricsEventObserver`) and to logs
/// (`LoggingEventObserver`).
///
/// `observe(_:)` runs on the path of the read or fetch it reports (see `Docs/Observability.md`), so the
/// observers it calls must be quick and thread-safe, as those two are.
public struct StoreEventFanOut: StoreEventObserver {
    /// The observers, called in this order.
    public let observers: [any StoreEventObserver]

    /// Makes an observer that forwards to `observers`.
    ///
    /// - Parameter observers: The observers, called in this order.
    public init(_ observers: [any StoreEventObserver]) {
        self.observers = observers
    }

    /// Passes `event` to each observer.
    ///
    /// - Parameter event: The event a store reported.
    public func observe(_ event: StoreEvent) {
        for observer in observers { observer.observe(event) }
    }
}
