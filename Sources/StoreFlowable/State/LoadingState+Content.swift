extension LoadingState {
    /// The content this state carries, whatever kind of state it is.
    ///
    /// A store sends the content it knows of with every state, so a screen can keep showing it while a
    /// refresh is loading or after it failed:
    ///
    /// | State | `content` |
    /// | --- | --- |
    /// | ``loading(content:)`` | its content: what the cache held when the fetch started, or `nil` |
    /// | ``completed(content:next:prev:)`` | its content, never `nil` |
    /// | ``error(content:rawError:)`` | its content: the last good value, or `nil` |
    public var content: Content? {
        switch self {
        case .loading(let content): content
        case .completed(let content, _, _): content
        case .error(let content, _): content
        }
    }

    /// Whether this state is ``loading(content:)``: an origin fetch is in flight.
    ///
    /// A completed state whose `next` or `prev` direction is loading a page is *not* loading; ask
    /// ``AdditionalLoadingState/isLoading`` on the direction for that.
    public var isLoading: Bool {
        if case .loading = self { return true }
        return false
    }

    /// The error of an ``error(content:rawError:)`` state, or `nil` for any other state.
    ///
    /// A completed state whose `next` or `prev` page request failed has no `rawError`; ask
    /// ``AdditionalLoadingState/rawError`` on the direction for that.
    public var rawError: (any Error)? {
        if case .error(_, let error) = self { return error }
        return nil
    }
}
