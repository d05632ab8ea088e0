extension LoadingState {
    /// Whether the state carries content that may be withdrawn: `.loading` and `.error` with content.
    /// (A `.completed` state's content is what a fetch, an update or a fresh read just produced.)
    var hasWithdrawableContent: Bool {
        switch self {
        case .loading(.some): true
        case .error(.some, _): true
        default: false
        }
    }

    /// The same `.loading` or `.error` state with no content; any other state as it is.
    var withoutContent: LoadingState {
        switch self {
        case .loading: .loading(content: nil)
        case .error(_, let rawError): .error(content: nil, rawError: rawError)
        case .completed: self
        }
    }
}
