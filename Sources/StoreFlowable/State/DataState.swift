/// What a key's store is doing, as ``FlowableDataStateManager`` tracks it, without the content.
///
/// `loading` is reported exactly while an origin fetch for the key is in flight; the store never
/// reports `loading` with nothing in flight.
public enum DataState: Sendable {
    /// Nothing is in flight and the last fetch, if any, succeeded.
    case fixed
    /// An origin fetch is in flight.
    case loading
    /// Nothing is in flight and the last fetch or cache write failed with this error.
    case error(any Error)

    /// Whether an origin fetch is in flight.
    public var isLoading: Bool {
        if case .loading = self { return true }
        return false
    }

    /// The error of the last failure, or `nil` when the state is not `.error`.
    public var rawError: (any Error)? {
        if case .error(let error) = self { return error }
        return nil
    }
}
