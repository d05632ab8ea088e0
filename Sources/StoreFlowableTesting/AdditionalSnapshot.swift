public import StoreFlowable

/// An `Equatable` copy of an `AdditionalLoadingState`, with the error reduced to its description.
///
/// Used inside ``StateSnapshot/completedPaging(_:next:prev:)``.
public enum AdditionalSnapshot: Equatable, Sendable, CustomStringConvertible {
    /// Nothing is loading in this direction.
    ///
    /// - Parameter canRequestAdditionalData: Whether another page exists in this direction.
    case fixed(canRequestAdditionalData: Bool)
    /// A page in this direction is being fetched.
    case loading
    /// The last request for a page in this direction failed.
    ///
    /// - Parameter description: `String(describing:)` of the error.
    case error(String)

    /// Copies `state`, describing its error with `String(describing:)`.
    ///
    /// - Parameter state: The state to copy.
    public init(_ state: AdditionalLoadingState) {
        switch state {
        case .fixed(let canRequest): self = .fixed(canRequestAdditionalData: canRequest)
        case .loading: self = .loading
        case .error(let error): self = .error(String(describing: error))
        }
    }

    /// The snapshot of a direction with nothing more to load: `.fixed(canRequestAdditionalData: false)`.
    public static var noMoreData: AdditionalSnapshot { .fixed(canRequestAdditionalData: false) }

    /// The case as a test would write it, such as `.fixed(canRequestAdditionalData: true)`.
    public var description: String {
        switch self {
        case .fixed(let canRequest): ".fixed(canRequestAdditionalData: \(canRequest))"
        case .loading: ".loading"
        case .error(let description): ".error(\(String(reflecting: description)))"
        }
    }
}
