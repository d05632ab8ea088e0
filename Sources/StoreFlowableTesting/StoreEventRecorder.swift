public import StoreFlowable

/// A ``StoreEventObserver`` for tests: records every event it receives, in order, and lets a test wait
/// for a number of them.
///
/// ```swift
/// let events = StoreEventRecorder()
/// let manager = FlowableDataStateManager<Int>(observer: events)
/// // … use stores of `manager` …
/// #expect(events.descriptions == ["cache miss", "fetch started (attempt 1)", …])
/// ```
///
/// Promises: ``observe(_:)`` may be called from any task, concurrently; it never blocks on a waiting
/// test. The waiting method suspends without polling and returns at once when its task is cancelled.
public final class StoreEventRecorder: StoreEventObserver {
    private struct State: Sendable {
        var events: [StoreEvent] = []
        var waiters = WaiterList<Int, Void>()
    }

    private let state = LockedValue(State())

    /// Creates a recorder with no events.
    public init() {}

    /// Records `event`.
    ///
    /// - Parameter event: The event the store reported.
    public func observe(_ event: StoreEvent) {
        let ready = state.withLock { state in
            state.events.append(event)
            return state.waiters.removeReached(state.events.count)
        }
        for waiter in ready { waiter.resume(returning: ()) }
    }

    /// Every event so far, oldest first.
    public var events: [StoreEvent] { state.withLock { $0.events } }

    /// The kind of every event so far, as one-line descriptions (``StoreEvent/Kind/description``),
    /// oldest first: easy to compare with an expected sequence.
    public var descriptions: [String] { events.map(\.kind.description) }

    /// Forgets the events recorded so far.
    public func removeAll() {
        state.withLock { $0.events.removeAll() }
    }

    /// Returns once at least `count` events were recorded, or at once when the task is cancelled.
    ///
    /// - Parameter count: The number of events to wait for.
    public func waitForEvents(_ count: Int) async {
        await state.park(
            in: \.waiters, condition: count, ifCancelled: (),
            arrive: { $0.events.count >= count ? () : nil })
    }
}
