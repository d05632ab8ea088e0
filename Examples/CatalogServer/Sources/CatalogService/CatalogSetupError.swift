/// Why the service could not be set up from what it was given, before anything was opened.
public enum CatalogSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The PostgreSQL URL cannot be used; `reason` says why (the URL itself is left out: it may hold a
    /// password).
    case invalidPostgresURL(reason: String)

    /// The error in one sentence.
    public var description: String {
        switch self {
        case .invalidPostgresURL(let reason): "the PostgreSQL URL cannot be used: \(reason)"
        }
    }
}
