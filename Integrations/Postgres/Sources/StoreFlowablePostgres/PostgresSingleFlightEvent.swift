/// What a ``PostgresSingleFlight`` reports besides its results, for logs and metrics.
public enum PostgresSingleFlightEvent: Sendable, Equatable, CustomStringConvertible {
    /// This instance claimed `key` and calls the origin.
    case claimed(key: String)
    /// This instance claimed `key` after another holder's claim expired (that holder died or overran
    /// its lease) and calls the origin.
    case tookOverExpiredClaim(key: String)
    /// Another instance holds the claim on `key`: this one waits for its value (reported once per
    /// fetch, when the wait begins).
    case waiting(key: String)
    /// Another instance held the claim on `key`; this one waited for its value and used it instead of
    /// calling the origin.
    case usedValueOfOtherInstance(key: String)
    /// The claim could not be taken or checked (the database failed or timed out): this instance calls
    /// the origin without coordinating, so that a database outage never blocks fetches.
    case claimUnavailable(key: String, error: String)

    /// The event in one line, for logs.
    public var description: String {
        switch self {
        case .claimed(let key): "claimed \(key)"
        case .tookOverExpiredClaim(let key): "took over the expired claim on \(key)"
        case .waiting(let key): "waiting for another instance's fetch of \(key)"
        case .usedValueOfOtherInstance(let key): "used another instance's value of \(key)"
        case .claimUnavailable(let key, let error): "fetching \(key) without a claim: \(error)"
        }
    }
}
