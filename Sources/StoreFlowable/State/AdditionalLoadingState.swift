/// The state of loading more data in one direction (the next or the previous page) of a completed value.
///
/// Without pagination both directions of every ``LoadingState/completed(content:next:prev:)`` are
/// `.fixed(canRequestAdditionalData: false)`; paged stores report `.loading` while a page is in flight
/// and `.error` when the last page request failed.
public enum AdditionalLoadingState: Sendable {
    /// Nothing is loading in this direction.
    ///
    /// - Parameter canRequestAdditionalData: `true` when another page exists in this direction and a
    ///   request for it would fetch.
    case fixed(canRequestAdditionalData: Bool)
    /// A page in this direction is being fetched.
    case loading
    /// The last request for a page in this direction failed.
    ///
    /// - Parameter rawError: The error the page fetch threw.
    case error(rawError: any Error)

    /// The state of a direction that has nothing more to load: `.fixed(canRequestAdditionalData: false)`.
    public static var noMoreData: AdditionalLoadingState { .fixed(canRequestAdditionalData: false) }

    /// Whether this direction is loading a page right now.
    public var isLoading: Bool {
        if case .loading = self { return true }
        return false
    }

    /// The error of the last failed page request in this direction, or `nil` when it did not fail.
    public var rawError: (any Error)? {
        if case .error(let error) = self { return error }
        return nil
    }

    /// Whether a request for more data in this direction would fetch.
    public var canRequestAdditionalData: Bool {
        if case .fixed(let canRequest) = self { return canRequest }
        return false
    }
}
