/// What every list API double of this module offers besides its pages: it records each request, holds
/// requests at a gate, fails scripted requests, and lets a test wait for requests and cancellations.
///
/// ``PageNumberListAPI`` and ``CursorListAPI`` conform; the members below are theirs.
///
/// ```swift
/// api.failNextRequests(1, with: Offline())   // the next request to leave the gate throws Offline()
/// api.hold()                                 // requests now wait at the gate
/// await api.waitForRequests(2)               // both requests are recorded and parked at the gate
/// api.release()
/// ```
///
/// Promises:
/// - Every member may be used from any task, concurrently.
/// - A request is recorded in ``requests`` and counted in ``requestCount`` when it arrives, before the
///   gate; failed, cancelled and rejected requests are recorded too. If the gate is held, the request
///   is parked there by the time ``waitForRequests(_:)`` returns for it.
/// - A request whose task is cancelled before it arrives at a held gate, while it waits there, or by
///   the time it leaves the gate throws `CancellationError`, takes no scripted failure, and counts in
///   ``cancelledCount``, like an HTTP client that stops a cancelled request.
/// - Failures scripted with ``failNextRequests(_:with:)`` are taken in the order requests leave the
///   gate, before the request itself is checked.
/// - The waiting methods suspend without polling, return at once when their condition already holds,
///   and return early when the calling task is cancelled.
public protocol ListAPIDouble: Sendable {
    /// What one request asked for, as recorded in ``requests``.
    associatedtype Request: Sendable

    /// The machinery behind the members of this protocol. It has no public members: use those of the
    /// protocol instead.
    var requestControl: ListAPIControl<Request> { get }
}

extension ListAPIDouble {
    // MARK: Records

    /// The requests so far, in the order they arrived, including failed, cancelled and rejected ones.
    public var requests: [Request] {
        requestControl.requests
    }

    /// The number of requests so far, including failed, cancelled and rejected ones.
    public var requestCount: Int {
        requestControl.requestCount
    }

    /// The number of requests that threw `CancellationError` because their task was cancelled.
    public var cancelledCount: Int {
        requestControl.cancelledCount
    }

    /// The number of requests running right now, including those waiting at the gate.
    public var inFlightCount: Int {
        requestControl.inFlightCount
    }

    /// The largest number of requests that ever ran at the same time.
    ///
    /// A one-way store that keeps its single-flight promise keeps this at 1; a two-way store may load
    /// one page in each direction at once, so 2 is fine there.
    public var maxConcurrentRequests: Int {
        requestControl.maxConcurrentRequests
    }

    /// The number of requests waiting at the held gate right now.
    public var waitingAtGateCount: Int {
        requestControl.waitingAtGateCount
    }

    /// The number of scripted failures no request has taken yet.
    public var pendingFailureCount: Int {
        requestControl.pendingFailureCount
    }

    // MARK: Scripting

    /// Makes the next `count` requests that leave the gate throw `error` instead of answering.
    ///
    /// Calls add up: failing 1 request and then 2 more fails the next 3. A cancelled request takes no
    /// failure.
    ///
    /// - Parameters:
    ///   - count: The number of requests to fail; must be at least 0.
    ///   - error: The error those requests throw.
    public func failNextRequests(_ count: Int, with error: any Error) {
        requestControl.failNextRequests(count, with: error)
    }

    /// Closes the gate: every request that arrives from now on waits at it until ``release()``.
    ///
    /// Requests already past the gate are not affected.
    public func hold() {
        requestControl.hold()
    }

    /// Opens the gate and lets every request waiting at it continue, in arrival order.
    ///
    /// The gate stays open until the next ``hold()``.
    public func release() {
        requestControl.release()
    }

    // MARK: Waiting

    /// Suspends until at least `count` requests have arrived.
    ///
    /// A request that arrived while the gate was held is already waiting at the gate by the time this
    /// returns. Returns at once when that is already true, and early when the calling task is
    /// cancelled.
    ///
    /// - Parameter count: The number of requests to wait for (see ``requestCount``).
    public func waitForRequests(_ count: Int) async {
        await requestControl.waitForRequests(count)
    }

    /// Suspends until at least `count` requests have thrown `CancellationError`.
    ///
    /// Returns at once when that is already true, and early when the calling task is cancelled.
    ///
    /// - Parameter count: The number of cancelled requests to wait for (see ``cancelledCount``).
    public func waitForCancellations(_ count: Int) async {
        await requestControl.waitForCancellations(count)
    }
}
