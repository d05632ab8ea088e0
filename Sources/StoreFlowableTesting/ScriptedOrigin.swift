import StoreFlowable

/// An origin you script for tests: it returns queued results in order, can hold fetches open at a
/// gate, counts calls, and notices when the fetching task is cancelled.
///
/// Call ``fetch()`` from your callback's `fetchDataFromOrigin()` (``TestStoreCallback`` does this for
/// you), queue what the origin answers with ``enqueue(_:)``, and read ``callCount`` or wait with
/// ``waitForCalls(_:)`` to check how often the store fetched.
///
/// ```swift
/// let origin = ScriptedOrigin<String>([.success("first")], otherwise: { .success("fresh-\($0)") })
/// origin.hold()                       // fetches now wait at the gate
/// let task = Task { try await origin.fetch() }
/// await origin.waitForCalls(1)        // the fetch is counted and parked at the gate
/// origin.release()                    // let it through
/// #expect(try await task.value == "first")
/// ```
///
/// Promises:
/// - Every method may be called from any task, concurrently; none of them blocks on a fetch.
/// - A fetch that ``waitForCalls(_:)`` has seen is already parked at the gate if the gate was held
///   when it arrived, so ``release()`` followed by ``hold()`` lets exactly those fetches through.
/// - Queued results are handed out first in, first out, in the order fetches leave the gate.
/// - The waiting methods suspend without polling and return at once when the calling task is
///   cancelled.
public final class ScriptedOrigin<Value: Sendable>: Sendable {
    /// The counters, queue, gate and waiters, guarded by one lock.
    struct State: Sendable {
        var queue: [Result<Value, any Error>]
        var calls = 0
        var cancellations = 0
        var inFlight = 0
        var maxInFlight = 0
        var gateHeld = false
        var gate = WaiterList<Void, Bool>()
        var callWaiters = WaiterList<Int, Void>()
        var cancellationWaiters = WaiterList<Int, Void>()
    }

    /// Guards ``State``, following the rule at ``WaiterList``: held only to read and update it, never
    /// while calling the fallback (user code), resuming a waiter or reading `Task.isCancelled`; the
    /// cancellation handlers of the gate and of the waiting methods take it.
    private let state: LockedValue<State>
    private let fallback: (@Sendable (_ call: Int) -> Result<Value, any Error>)?

    /// Creates an origin that answers with `results` in order and then with `fallback`.
    ///
    /// - Parameters:
    ///   - results: What the first fetches return or throw, in order.
    ///   - fallback: What a fetch returns or throws once the queue is empty; it receives the 1-based
    ///     number of the call. Without it, such a fetch throws ``ScriptedOriginError/exhausted(call:)``.
    public init(
        _ results: [Result<Value, any Error>] = [],
        otherwise fallback: (@Sendable (_ call: Int) -> Result<Value, any Error>)? = nil
    ) {
        state = LockedValue(State(queue: results))
        self.fallback = fallback
    }

    // MARK: Scripting

    /// Appends a result for a later fetch to return or throw.
    ///
    /// - Parameter result: `.success` to return a value, `.failure` to throw an error.
    public func enqueue(_ result: Result<Value, any Error>) {
        state.withLock { $0.queue.append(result) }
    }

    /// Appends a value for a later fetch to return.
    ///
    /// - Parameter value: The value the fetch returns.
    public func enqueue(value: Value) {
        enqueue(.success(value))
    }

    /// Appends an error for a later fetch to throw.
    ///
    /// - Parameter error: The error the fetch throws.
    public func enqueue(error: any Error) {
        enqueue(.failure(error))
    }

    /// The number of queued results no fetch has taken yet.
    public var pendingResultCount: Int {
        state.withLock { $0.queue.count }
    }

    // MARK: Fetching

    /// Answers one fetch: waits at the gate if it is held, then returns or throws the next scripted
    /// result.
    ///
    /// Call it from your callback's `fetchDataFromOrigin()`. In order, it:
    /// 1. counts the call (``callCount`` and ``inFlightCount`` go up, ``maxConcurrentCalls`` records
    ///    the high-water mark) and wakes ``waitForCalls(_:)``;
    /// 2. if the gate is held, suspends until ``release()``; if the calling task is cancelled while it
    ///    waits there (or arrives already cancelled at a held gate), counts a cancellation and throws
    ///    `CancellationError`;
    /// 3. takes the next queued result, or asks the fallback with this call's 1-based number;
    /// 4. if the calling task is cancelled by now, still returns or throws that result but counts a
    ///    cancellation, so you can check that the store cancelled a fetch it no longer needed.
    ///
    /// ``inFlightCount`` goes down again on every exit.
    ///
    /// - Returns: The scripted value.
    /// - Throws: The scripted error; `CancellationError` when cancelled at a held gate;
    ///   ``ScriptedOriginError/exhausted(call:)`` when nothing is queued and there is no fallback.
    public func fetch() async throws -> Value {
        var call = 0
        var reachedCallWaiters: [WaiterList<Int, Void>.Continuation] = []
        let passed = await state.park(
            in: \.gate, condition: (), ifCancelled: false,
            arrive: { state in
                state.calls += 1
                state.inFlight += 1
                state.maxInFlight = max(state.maxInFlight, state.inFlight)
                call = state.calls
                reachedCallWaiters = state.callWaiters.removeReached(state.calls)
                return state.gateHeld ? nil : true
            },
            afterArriving: {
                for waiter in reachedCallWaiters { waiter.resume() }
            })
        guard passed else {
            finishCall(cancelled: true)
            throw CancellationError()
        }
        let scripted: Result<Value, any Error>? = state.withLock { state in
            state.queue.isEmpty ? nil : state.queue.removeFirst()
        }
        let result = scripted ?? fallback?(call) ?? .failure(ScriptedOriginError.exhausted(call: call))
        finishCall(cancelled: Task.isCancelled)
        return try result.get()
    }

    /// Takes a call off ``inFlightCount`` and, if it saw cancellation, counts that.
    private func finishCall(cancelled: Bool) {
        let reached: [WaiterList<Int, Void>.Continuation] = state.withLock { state in
            state.inFlight -= 1
            guard cancelled else { return [] }
            state.cancellations += 1
            return state.cancellationWaiters.removeReached(state.cancellations)
        }
        for waiter in reached { waiter.resume() }
    }

    // MARK: Observing

    /// The number of times ``fetch()`` has been called.
    public var callCount: Int {
        state.withLock { $0.calls }
    }

    /// The number of fetches that saw their task cancelled, at the gate or when returning.
    public var cancelledCount: Int {
        state.withLock { $0.cancellations }
    }

    /// Whether any fetch saw its task cancelled; the same as `cancelledCount > 0`.
    public var sawCancellation: Bool {
        cancelledCount > 0
    }

    /// The number of fetches running right now, including those waiting at the gate.
    public var inFlightCount: Int {
        state.withLock { $0.inFlight }
    }

    /// The largest number of fetches that ever ran at the same time.
    ///
    /// A store keeps its single-flight promise when this stays at 1.
    public var maxConcurrentCalls: Int {
        state.withLock { $0.maxInFlight }
    }

    /// The number of fetches waiting at the held gate right now.
    public var waitingAtGateCount: Int {
        state.withLock { $0.gate.count }
    }

    // MARK: Gate

    /// Closes the gate: every fetch that arrives from now on waits at it until ``release()``.
    ///
    /// Fetches already past the gate are not affected.
    public func hold() {
        state.withLock { $0.gateHeld = true }
    }

    /// Opens the gate and lets every fetch waiting at it continue.
    ///
    /// The gate stays open until the next ``hold()``.
    public func release() {
        let waiting = state.withLock { state in
            state.gateHeld = false
            return state.gate.removeAll()
        }
        for waiter in waiting { waiter.resume(returning: true) }
    }

    // MARK: Waiting

    /// Suspends until ``fetch()`` has been called at least `count` times.
    ///
    /// Returns at once when that is already true, and early when the calling task is cancelled. When
    /// the gate was held as the call arrived, the call is already waiting at the gate by the time
    /// this returns. Any number of tasks may wait at once.
    ///
    /// - Parameter count: The number of calls to wait for.
    public func waitForCalls(_ count: Int) async {
        await state.park(
            in: \.callWaiters, condition: count, ifCancelled: (),
            arrive: { $0.calls >= count ? () : nil })
    }

    /// Suspends until fetches have seen their task cancelled at least `count` times.
    ///
    /// Returns at once when that is already true, and early when the calling task is cancelled. Any
    /// number of tasks may wait at once.
    ///
    /// - Parameter count: The number of cancellations to wait for (see ``cancelledCount``).
    public func waitForCancellations(_ count: Int) async {
        await state.park(
            in: \.cancellationWaiters, condition: count, ifCancelled: (),
            arrive: { $0.cancellations >= count ? () : nil })
    }
}
