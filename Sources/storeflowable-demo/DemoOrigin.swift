/// A user as the demo's origin serves it; `Codable` so that the disk cache can store it.
struct User: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The user's id, also the store's key.
    let id: Int
    /// The user's display name.
    let name: String
    /// Bumped by the origin on every successful fetch of this user, so a refresh visibly brings a new
    /// value.
    let revision: Int

    var description: String { "\(name) rev \(revision)" }
}

/// A simulated remote origin, standing in for an HTTP API: answers after a fixed latency, counts its
/// calls, and fails on demand.
///
/// The latency is slept on an injected clock, so a test could pass a manual clock; the demo uses a real
/// `ContinuousClock`. Cancelling the calling task cancels the sleep, like a cancellable HTTP request.
actor DemoOrigin {
    /// The error the origin throws while it is switched to failing.
    struct Outage: Error, CustomStringConvertible {
        var description: String { "HTTP 503 (simulated)" }
    }

    private static let names = [1: "Ada", 2: "Grace", 3: "Alan", 4: "Barbara", 5: "Edsger"]

    private let latency: Duration
    private let clock: any Clock<Duration>
    private var revisions: [Int: Int] = [:]
    private var isFailing = false

    /// How many times ``fetchUser(id:)`` was called, whatever the outcome.
    private(set) var callCount = 0

    /// Creates an origin that answers every request after `latency` on `clock`.
    init(latency: Duration = .milliseconds(40), clock: any Clock<Duration> = ContinuousClock()) {
        self.latency = latency
        self.clock = clock
    }

    /// Makes the following requests fail with ``Outage`` (`true`) or succeed again (`false`).
    func setFailing(_ failing: Bool) {
        isFailing = failing
    }

    /// Fetches user `id`: waits for the latency, then returns the next revision or throws ``Outage``.
    ///
    /// - Throws: ``Outage`` while failing; `CancellationError` when the calling task is cancelled.
    func fetchUser(id: Int) async throws -> User {
        callCount += 1
        let failsThisCall = isFailing
        try await clock.sleep(for: latency)
        if failsThisCall { throw Outage() }
        let revision = revisions[id, default: 0] + 1
        revisions[id] = revision
        return User(id: id, name: Self.names[id] ?? "user \(id)", revision: revision)
    }
}
