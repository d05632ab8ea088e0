extension LoadingState {
    /// Runs the closure for this state's kind and returns what it returns.
    ///
    /// This is an exhaustive `switch` with named closures, convenient when a view or a log line turns
    /// a state into one value:
    ///
    /// ```swift
    /// let text = state.doAction(
    ///     onLoading: { content in content.map { "\($0) (refreshing)" } ?? "Loading…" },
    ///     onCompleted: { content, _, _ in "\(content)" },
    ///     onError: { content, error in content.map { "\($0) (stale)" } ?? "Failed: \(error)" }
    /// )
    /// ```
    ///
    /// Exactly one closure runs, exactly once, synchronously on the caller's thread.
    ///
    /// - Parameters:
    ///   - onLoading: Runs for ``loading(content:)`` with its content.
    ///   - onCompleted: Runs for ``completed(content:next:prev:)`` with its content, next and previous
    ///     states.
    ///   - onError: Runs for ``error(content:rawError:)`` with its content and error.
    /// - Returns: What the closure that ran returned.
    /// - Throws: Only what the closure that ran throws.
    public func doAction<Output>(
        onLoading: (_ content: Content?) throws -> Output,
        onCompleted: (_ content: Content, _ next: AdditionalLoadingState, _ prev: AdditionalLoadingState) throws ->
            Output,
        onError: (_ content: Content?, _ rawError: any Error) throws -> Output
    ) rethrows -> Output {
        switch self {
        case .loading(let content): try onLoading(content)
        case .completed(let content, let next, let prev): try onCompleted(content, next, prev)
        case .error(let content, let error): try onError(content, error)
        }
    }

    /// Runs the asynchronous closure for this state's kind and returns what it returns.
    ///
    /// The asynchronous form of ``doAction(onLoading:onCompleted:onError:)``, for closures that need to
    /// `await`. Exactly one closure runs, exactly once, on the caller's isolation (the actor the caller
    /// runs on, if any), so the closures may touch the caller's actor-isolated state.
    ///
    /// - Parameters:
    ///   - isolation: The actor the closures run on; defaults to the caller's.
    ///   - onLoading: Runs for ``loading(content:)`` with its content.
    ///   - onCompleted: Runs for ``completed(content:next:prev:)`` with its content, next and previous
    ///     states.
    ///   - onError: Runs for ``error(content:rawError:)`` with its content and error.
    /// - Returns: What the closure that ran returned.
    /// - Throws: Only what the closure that ran throws.
    public func doAction<Output>(
        isolation: isolated (any Actor)? = #isolation,
        onLoading: (_ content: Content?) async throws -> Output,
        onCompleted: (_ content: Content, _ next: AdditionalLoadingState, _ prev: AdditionalLoadingState) async throws
            -> Output,
        onError: (_ content: Content?, _ rawError: any Error) async throws -> Output
    ) async rethrows -> Output {
        switch self {
        case .loading(let content): try await onLoading(content)
        case .completed(let content, let next, let prev): try await onCompleted(content, next, prev)
        case .error(let content, let error): try await onError(content, error)
        }
    }
}
