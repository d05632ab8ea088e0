extension LoadingState {
    /// Combines this state with another into the state of their combined content.
    ///
    /// Use it when a screen needs two pieces of data and should show one state for both:
    ///
    /// ```swift
    /// let screen = user.zip(posts) { user, posts in Profile(user: user, posts: posts) }
    /// ```
    ///
    /// The rules, first match wins:
    ///
    /// 1. Either is ``error(content:rawError:)`` → `.error`, with the receiver's error when both
    ///    failed. Its content is the combined content when both states have content, else `nil`.
    /// 2. Either is ``loading(content:)`` → `.loading`, with the combined content when both states have
    ///    content, else `nil`.
    /// 3. Both are ``completed(content:next:prev:)`` → `.completed` with the combined content, and
    ///    `next` and `prev` each combined by ``AdditionalLoadingState/zip(_:)``: an error in either
    ///    wins (the receiver's first), then loading in either, else
    ///    `.fixed(canRequestAdditionalData:)` true when either can request more.
    ///
    /// The rules are associative, so `a.zip(b).zip(c)` and `a.zip(b.zip(c))` give the same state, up to
    /// how the contents are grouped; ``zip(_:_:_:)`` combines three states this way.
    ///
    /// `transform` runs synchronously, at most once, and only when both states have content.
    ///
    /// - Parameters:
    ///   - other: The state to combine with this one.
    ///   - transform: Combines this state's content with the other's.
    /// - Returns: The combined state.
    /// - Throws: Only what `transform` throws.
    public func zip<Other: Sendable, Combined: Sendable>(
        _ other: LoadingState<Other>,
        _ transform: (Content, Other) throws -> Combined
    ) rethrows -> LoadingState<Combined> {
        switch (self, other) {
        case (.error(let content, let error), _):
            .error(content: try Self.combine(content, other.content, transform), rawError: error)
        case (_, .error(let otherContent, let error)):
            .error(content: try Self.combine(content, otherContent, transform), rawError: error)
        case (.loading, _), (_, .loading):
            .loading(content: try Self.combine(content, other.content, transform))
        case (.completed(let content, let next, let prev), .completed(let otherContent, let otherNext, let otherPrev)):
            .completed(
                content: try transform(content, otherContent), next: next.zip(otherNext), prev: prev.zip(otherPrev))
        }
    }

    /// Combines this state with two others into the state of their combined content.
    ///
    /// The same as `zip(second) { ($0, $1) }.zip(third) { transform($0.0, $0.1, $1) }`, so the rules of
    /// ``zip(_:_:)`` hold for all three: the first error in the order receiver, `second`, `third`
    /// wins; any loading state makes the result loading; content is combined only when all three
    /// states have it; `next` and `prev` of three completed states are combined by
    /// ``AdditionalLoadingState/zip(_:)``.
    ///
    /// `transform` runs synchronously, at most once, and only when all three states have content.
    ///
    /// - Parameters:
    ///   - second: The second state to combine.
    ///   - third: The third state to combine.
    ///   - transform: Combines the three contents, in the order receiver, `second`, `third`.
    /// - Returns: The combined state.
    /// - Throws: Only what `transform` throws.
    public func zip<Second: Sendable, Third: Sendable, Combined: Sendable>(
        _ second: LoadingState<Second>,
        _ third: LoadingState<Third>,
        _ transform: (Content, Second, Third) throws -> Combined
    ) rethrows -> LoadingState<Combined> {
        try zip(second) { ($0, $1) }.zip(third) { pair, third in try transform(pair.0, pair.1, third) }
    }

    /// Returns `transform(content, otherContent)` when both are present, else `nil`.
    private static func combine<Other, Combined>(
        _ content: Content?,
        _ otherContent: Other?,
        _ transform: (Content, Other) throws -> Combined
    ) rethrows -> Combined? {
        guard let content, let otherContent else { return nil }
        return try transform(content, otherContent)
    }
}
