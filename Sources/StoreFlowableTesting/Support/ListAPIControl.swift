import StoreFlowable

/// The request machinery the list API doubles share: it records each request, holds requests at a
/// gate, fails scripted requests, notices cancellation, and wakes tasks waiting for any of that.
///
/// Public only because ``ListAPIDouble`` names it; every member is internal, and ``ListAPIDouble`` adds
/// the public records, scripting and waiting members on top of it.
///
/// A double calls ``perform(_:respond:)`` once per request with a closure that computes the response
/// from the server-side data; the closure runs after the gate, outside this type's lock, so a response
/// reflects the server-side data at the moment the request leaves the gate.
///
/// Promises (``ListAPIDouble`` states them for the doubles' users):
/// - A request is recorded, counted and announced to ``waitForRequests(_:)`` when it arrives, before
///   the gate; if the gate is held it is parked there by the time any waiter wakes.
/// - A request whose task is cancelled before it arrives at a held gate, while it waits there, or by
///   the time it leaves the gate throws `CancellationError`, takes no scripted failure, and counts in
///   ``cancelledCount``.
/// - Scripted failures are taken first in, first out, in the order requests leave the gate.
public final class ListAPIControl<Request: Sendable>: Sendable {
    /// The records, gate, failures and waiters, guarded by one lock.
    struct State: Sendable {
        var requests: [Request] = []
        var cancellations = 0
        var inFlight = 0
        var maxInFlight = 0
        var failures: [any Error] = []
        var gateHeld = false
        var gate = WaiterList<Void, Bool>()
        var requestWaiters = WaiterList<Int, Void>()
        var cancellationWaiters = WaiterList<Int, Void>()
    }

    /// Guards ``State``, following the rule at ``WaiterList``: held only to read and update it, never
    /// while answering a request (`respond` runs after unlocking), resuming a waiter or touching a task;
    /// the cancellation handlers of the gate and of the waiting methods take it.
    private let state = LockedValue(State())

    /// Creates the machinery of a double with nothing recorded, an open gate and no failures.
    init() {}

    /// Runs one request: records it, waits at the gate if it is held, then throws the next scripted
    /// failure or returns what `respond` returns.
    ///
    /// - Parameters:
    ///   - request: What the request asked for, appended to ``requests``.
    ///   - respond: Computes the response from the server-side data; called at most once, after the
    ///     gate and outside the lock.
    /// - Returns: What `respond` returns.
    /// - Throws: `CancellationError` when the calling task is cancelled (see the type's promises); the
    ///   next scripted failure; or what `respond` throws.
    func perform<Response>(_ request: Request, respond: () throws -> Response) async throws -> Response {
        var reachedWaiters: [WaiterList<Int, Void>.Continuation] = []
        let passed = await state.park(
            in: \.gate, condition: (), ifCancelled: false,
            arrive: { state in
                state.requests.append(request)
                state.inFlight += 1
                state.maxInFlight = max(state.maxInFlight, state.inFlight)
                reachedWaiters = state.requestWaiters.removeReached(state.requests.count)
                return state.gateHeld ? nil : true
            },
            afterArriving: {
                for waiter in reachedWaiters { waiter.resume() }
            })
        guard passed, !Task.isCancelled else {
            finish(cancelled: true)
            throw CancellationError()
        }
        defer { finish(cancelled: false) }
        let failure: (any Error)? = state.withLock { state in
            state.failures.isEmpty ? nil : state.failures.removeFirst()
        }
        if let failure { throw failure }
        return try respond()
    }

    /// Takes a request off ``inFlightCount`` and, if it was cancelled, counts that.
    private func finish(cancelled: Bool) {
        let reached: [WaiterList<Int, Void>.Continuation] = state.withLock { state in
            state.inFlight -= 1
            guard cancelled else { return [] }
            state.cancellations += 1
            return state.cancellationWaiters.removeReached(state.cancellations)
        }
        for waiter in reached { waiter.resume() }
    }

    // MARK: Records

    /// Every request so far, in the order they arrived, including failed and cancelled ones.
    var requests: [Request] {
        state.withLock { $0.requests }
    }

    /// The number of requests so far.
    var requestCount: Int {
        state.withLock { $0.requests.count }
    }

    /// The number of requests that threw `CancellationError`.
    var cancelledCount: Int {
        state.withLock { $0.cancellations }
    }

    /// The number of requests running right now, including those waiting at the gate.
    var inFlightCount: Int {
        state.withLock { $0.inFlight }
    }

    /// The largest number of requests that ever ran at the same time.
    var maxConcurrentRequests: Int {
        state.withLock { $0.maxInFlight }
    }

    /// The number of requests waiting at the held gate right now.
    var waitingAtGateCount: Int {
        state.withLock { $0.gate.count }
    }

    /// The number of scripted failures no request has taken yet.
    var pendingFailureCount: Int {
        state.withLock { $0.failures.count }
    }

    // MARK: Scripting

    /// Makes the next `count` requests that leave the gate throw `error`.
    func failNextRequests(_ count: Int, with error: any Error) {
        precondition(count >= 0, "failNextRequests needs a count of at least zero, not \(count)")
        state.withLock { $0.failures.append(contentsOf: repeatElement(error, count: count)) }
    }

    /// Closes the gate for requests that arrive from now on.
    func hold() {
        state.withLock { $0.gateHeld = true }
    }

    /// Opens the gate and lets every request waiting at it continue, in arrival order.
    func release() {
        let waiting = state.withLock { state in
            state.gateHeld = false
            return state.gate.removeAll()
        }
        for waiter in waiting { waiter.resume(returning: true) }
    }

    // MARK: Waiting

    /// Suspends until at least `count` requests have arrived; returns early when cancelled.
    func waitForRequests(_ count: Int) async {
        await state.park(
            in: \.requestWaiters, condition: count, ifCancelled: (),
            arrive: { $0.requests.count >= count ? () : nil })
    }

    /// Suspends until at least `count` requests were cancelled; returns early when cancelled.
    func waitForCancellations(_ count: Int) async {
        await state.park(
            in: \.cancellationWaiters, condition: count, ifCancelled: (),
            arrive: { $0.cancellations >= count ? () : nil })
    }
}
