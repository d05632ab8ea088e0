/// A change to some of the upstream's faults: the body of `PUT /control`.
///
/// Each field is optional: `{"outage": true}` turns the outage on and keeps the latency and error rate.
/// ``UpstreamControl/applying(_:)`` makes the new faults from the current ones.
public struct UpstreamControlUpdate: Codable, Sendable, Equatable, Hashable {
    /// The new latency in milliseconds, or `nil` to keep the current one.
    public var latencyMilliseconds: Int?
    /// The new error rate from 0 to 1, or `nil` to keep the current one.
    public var errorRate: Double?
    /// Whether the outage is on from now, or `nil` to keep the current setting.
    public var outage: Bool?

    /// Makes a change; the fields left `nil` keep their current values.
    ///
    /// - Parameters:
    ///   - latencyMilliseconds: The new latency in milliseconds, or `nil`.
    ///   - errorRate: The new error rate from 0 to 1, or `nil`.
    ///   - outage: Whether the outage is on, or `nil`.
    public init(latencyMilliseconds: Int? = nil, errorRate: Double? = nil, outage: Bool? = nil) {
        self.latencyMilliseconds = latencyMilliseconds
        self.errorRate = errorRate
        self.outage = outage
    }
}
