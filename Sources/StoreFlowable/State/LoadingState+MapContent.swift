extension LoadingState {
    /// Transforms the content and keeps everything else: the kind of state, `next`, `prev` and the error.
    ///
    /// Use it to turn a store's stored type into what a screen shows:
    ///
    /// ```swift
    /// let titles = state.mapContent { articles in articles.map(\.title) }
    /// ```
    ///
    /// `transform` runs synchronously, once, only when the state has content: a
    /// `.loading(content: nil)` or `.error(content: nil, …)` maps to the same state with `nil` content
    /// without calling it.
    ///
    /// - Parameter transform: Turns the content into the new content.
    /// - Returns: The same kind of state carrying the transformed content.
    /// - Throws: Only what `transform` throws.
    public func mapContent<NewContent: Sendable>(
        _ transform: (Content) throws -> NewContent
    ) rethrows -> LoadingState<NewContent> {
        switch self {
        case .loading(let content):
            .loading(content: try content.map(transform))
        case .completed(let content, let next, let prev):
            .completed(content: try transform(content), next: next, prev: prev)
        case .error(let content, let error):
            .error(content: try content.map(transform), rawError: error)
        }
    }

    /// Transforms the content with an asynchronous closure and keeps everything else: the kind of
    /// state, `next`, `prev` and the error.
    ///
    /// The asynchronous form of ``mapContent(_:)``. `transform` runs once, only when the state has
    /// content, on the caller's isolation (the actor the caller runs on, if any).
    ///
    /// - Parameters:
    ///   - isolation: The actor `transform` runs on; defaults to the caller's.
    ///   - transform: Turns the content into the new content.
    /// - Returns: The same kind of state carrying the transformed content.
    /// - Throws: Only what `transform` throws.
    public func mapContent<NewContent: Sendable>(
        isolation: isolated (any Actor)? = #isolation,
        _ transform: (Content) async throws -> NewContent
    ) async rethrows -> LoadingState<NewContent> {
        switch self {
        case .loading(let content):
            guard let content else { return .loading(content: nil) }
            return .loading(content: try await transform(content))
        case .completed(let content, let next, let prev):
            return .completed(content: try await transform(content), next: next, prev: prev)
        case .error(let content, let error):
            guard let content else { return .error(content: nil, rawError: error) }
            return .error(content: try await transform(content), rawError: error)
        }
    }
}
