/// The faults the upstream injects into every product request: the body of `GET /control`.
///
/// Its JSON is `{"latencyMilliseconds": 20, "errorRate": 0.0, "outage": false}`. Every product request
/// (single, batch, page, write) waits ``latencyMilliseconds``, then fails with 503 at ``errorRate``, and
/// always while ``outage`` is on. Change it with ``UpstreamControlUpdate``.
public struct UpstreamControl: Codable, Sendable, Equatable, Hashable {
    /// How long every product request waits before it is answered, in milliseconds (0 or more).
    public var latencyMilliseconds: Int
    /// The share of product requests that fail with 503, from 0 (none) to 1 (all).
    public var errorRate: Double
    /// Whether every product request fails with 503.
    public var outage: Bool

    /// Makes a set of faults.
    ///
    /// - Parameters:
    ///   - latencyMilliseconds: How long every product request waits, in milliseconds (20 by default).
    ///   - errorRate: The share of product requests that fail, from 0 to 1 (0 by default).
    ///   - outage: Whether every product request fails (`false` by default).
    public init(latencyMilliseconds: Int = 20, errorRate: Double = 0, outage: Bool = false) {
        self.latencyMilliseconds = latencyMilliseconds
        self.errorRate = errorRate
        self.outage = outage
    }

    /// Whether the faults are possible: a latency of 0 or more and an error rate from 0 to 1.
    public var isValid: Bool {
        latencyMilliseconds >= 0 && errorRate >= 0 && errorRate <= 1
    }

    /// These faults with the fields `update` names replaced, and the others kept.
    ///
    /// - Parameter update: The fields to change.
    /// - Returns: The changed faults (not checked: see ``isValid``).
    public func applying(_ update: UpstreamControlUpdate) -> UpstreamControl {
        UpstreamControl(
            latencyMilliseconds: update.latencyMilliseconds ?? latencyMilliseconds,
            errorRate: update.errorRate ?? errorRate,
            outage: update.outage ?? outage)
    }
}
