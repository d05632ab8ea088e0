import StoreFlowable

extension LoadingState {
    /// A short description in the shape of the case, such as `.completed("fresh")`, used in
    /// ``StateRecorderError``.
    var recorderDescription: String {
        switch self {
        case .loading(let content):
            return ".loading(\(describeContent(content)))"
        case .completed(let content, let next, let prev):
            let fixed = AdditionalLoadingState.noMoreData.recorderDescription
            if next.recorderDescription == fixed, prev.recorderDescription == fixed {
                return ".completed(\(describeContent(content)))"
            }
            return ".completedPaging(\(describeContent(content)), next: \(next.recorderDescription), "
                + "prev: \(prev.recorderDescription))"
        case .error(let content, let error):
            return ".error(\(describeContent(content)), \(String(reflecting: String(describing: error))))"
        }
    }
}

extension AdditionalLoadingState {
    /// A short description in the shape of the case, such as `.loading`.
    var recorderDescription: String {
        switch self {
        case .fixed(let canRequest): ".fixed(canRequestAdditionalData: \(canRequest))"
        case .loading: ".loading"
        case .error(let error): ".error(\(String(reflecting: String(describing: error))))"
        }
    }
}

/// Describes optional content as a test would write it: `nil`, `1`, or `"text"`.
func describeContent<Content>(_ content: Content?) -> String {
    content.map { String(reflecting: $0) } ?? "nil"
}
