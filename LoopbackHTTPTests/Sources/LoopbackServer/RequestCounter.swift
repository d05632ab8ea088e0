import NIOConcurrencyHelpers

/// Counts the requests of each route of a ``LoopbackServer``, from the server's threads.
final class RequestCounter: Sendable {
    private let counts = NIOLockedValueBox([String: Int]())

    /// Counts one request of `route`.
    func add(_ route: String) {
        counts.withLockedValue { $0[route, default: 0] += 1 }
    }

    /// The requests of `route` so far.
    func count(_ route: String) -> Int {
        counts.withLockedValue { $0[route, default: 0] }
    }
}
