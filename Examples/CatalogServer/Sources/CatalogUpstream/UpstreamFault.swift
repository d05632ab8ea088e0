/// Why the upstream failed a product request on purpose: the fault its ``UpstreamControl`` injected.
///
/// The upstream answers such a request with 503 and `{"error": ...}` naming the fault.
public enum UpstreamFault: Error, Sendable, Hashable {
    /// The outage switch is on: every product request fails.
    case outage
    /// The request was one of the share ``UpstreamControl/errorRate`` fails.
    case injectedError

    /// The message of the error body the upstream answers with.
    public var message: String {
        switch self {
        case .outage: "the upstream is in an outage (PUT /control {\"outage\": false} ends it)"
        case .injectedError: "the upstream failed this request on purpose (its error rate)"
        }
    }
}
