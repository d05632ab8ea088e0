extension LoadingState: CustomStringConvertible {
    /// A short, readable form of the state for logs, demos and test failures.
    ///
    /// Contents and errors are written with `String(describing:)`; a missing content is `nil`.
    /// Examples:
    ///
    /// - `loading(content: nil)`, `loading(content: 2)`
    /// - `completed(3)` when neither direction has more to load, else
    ///   `completed(3, next: loading, prev: fixed(canRequestAdditionalData: true))`
    /// - `error(content: 2, rawError: timedOut)`
    public var description: String {
        switch self {
        case .loading(let content):
            return "loading(content: \(Self.describe(content)))"
        case .completed(let content, .fixed(false), .fixed(false)):
            return "completed(\(content))"
        case .completed(let content, let next, let prev):
            return "completed(\(content), next: \(Self.describe(next)), prev: \(Self.describe(prev)))"
        case .error(let content, let error):
            return "error(content: \(Self.describe(content)), rawError: \(error))"
        }
    }

    /// The content written with `String(describing:)`, or `nil`.
    private static func describe(_ content: Content?) -> String {
        guard let content else { return "nil" }
        return String(describing: content)
    }

    /// The state of one direction, written the way it is spelled in code.
    private static func describe(_ state: AdditionalLoadingState) -> String {
        switch state {
        case .fixed(let canRequest): "fixed(canRequestAdditionalData: \(canRequest))"
        case .loading: "loading"
        case .error(let error): "error(rawError: \(error))"
        }
    }
}
