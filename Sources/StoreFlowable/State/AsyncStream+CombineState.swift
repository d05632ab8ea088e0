extension AsyncStream {
    /// Combines this stream of states with another into a stream of their combined state, recomputed
    /// from the latest state of each whenever either emits.
    ///
    /// This is "combine latest" over ``LoadingState/zip(_:_:)``: use it to show one state for a screen
    /// that needs two stores.
    ///
    /// ```swift
    /// for await state in userStore.publish().combineState(postsStore.publish()) { user, posts in
    ///     Profile(user: user, posts: posts)
    /// } {
    ///     render(state)
    /// }
    /// ```
    ///
    /// Behaviour:
    /// 1. Nothing is emitted until both streams have emitted at least once; then every element of
    ///    either stream produces `latestOfSelf.zip(latestOfOther, transform)`.
    /// 2. The output keeps only the newest unread state (`.bufferingNewest(1)`): a slow consumer skips
    ///    intermediate states and always reads the latest combination next.
    /// 3. The output finishes when both streams have finished (a stream that finished keeps
    ///    contributing its last state while the other goes on).
    /// 4. When the consumer terminates the output, by cancelling the task iterating it or by dropping
    ///    the stream, the iteration of both input streams is cancelled at once, which terminates them
    ///    (their `onTermination` handlers run with `.cancelled`).
    ///
    /// The combination runs in one task of its own, started at once, that iterates both streams; as
    /// with any `AsyncStream`, each input must not be iterated anywhere else. `transform` runs in
    /// that task, only when both latest states have content.
    ///
    /// - Parameters:
    ///   - other: The stream to combine with this one.
    ///   - transform: Combines this stream's content with the other's.
    /// - Returns: The stream of combined states.
    public func combineState<Content: Sendable, Other: Sendable, Combined: Sendable>(
        _ other: AsyncStream<LoadingState<Other>>,
        _ transform: @escaping @Sendable (Content, Other) -> Combined
    ) -> AsyncStream<LoadingState<Combined>> where Element == LoadingState<Content> {
        CombineLatest.stream(
            initial: (LoadingState<Content>?.none, LoadingState<Other>?.none),
            feeds: [
                { events in for await state in self { events.yield(.update { $0.0 = state }) } },
                { events in for await state in other { events.yield(.update { $0.1 = state }) } },
            ],
            combine: { latest in
                guard let first = latest.0, let second = latest.1 else { return nil }
                return first.zip(second, transform)
            }
        )
    }

    /// Combines this stream of states with two others into a stream of their combined state,
    /// recomputed from the latest state of each whenever any of them emits.
    ///
    /// "Combine latest" over ``LoadingState/zip(_:_:_:)``, with the behaviour of
    /// ``combineState(_:_:)`` for three streams: nothing is emitted until all three have emitted; the
    /// output keeps only the newest unread state; it finishes when all three have finished; and when
    /// the consumer terminates it, the iteration of all three inputs is cancelled at once. One task
    /// iterates all three streams.
    ///
    /// - Parameters:
    ///   - second: The second stream to combine.
    ///   - third: The third stream to combine.
    ///   - transform: Combines the three contents, in the order receiver, `second`, `third`.
    /// - Returns: The stream of combined states.
    public func combineState<Content: Sendable, Second: Sendable, Third: Sendable, Combined: Sendable>(
        _ second: AsyncStream<LoadingState<Second>>,
        _ third: AsyncStream<LoadingState<Third>>,
        _ transform: @escaping @Sendable (Content, Second, Third) -> Combined
    ) -> AsyncStream<LoadingState<Combined>> where Element == LoadingState<Content> {
        CombineLatest.stream(
            initial: (LoadingState<Content>?.none, LoadingState<Second>?.none, LoadingState<Third>?.none),
            feeds: [
                { events in for await state in self { events.yield(.update { $0.0 = state }) } },
                { events in for await state in second { events.yield(.update { $0.1 = state }) } },
                { events in for await state in third { events.yield(.update { $0.2 = state }) } },
            ],
            combine: { latest in
                guard let first = latest.0, let second = latest.1, let third = latest.2 else { return nil }
                return first.zip(second, third, transform)
            }
        )
    }
}
