extension AdditionalLoadingState {
    /// Combines the state of one direction (next or previous) of two completed values into the state of
    /// that direction of their combination.
    ///
    /// ``LoadingState/zip(_:_:)`` uses this for `next` and for `prev`. The rules, first match wins:
    ///
    /// 1. Either is `.error` → `.error`, with the receiver's error when both failed: a failed page
    ///    request is what a screen must show and offer to retry.
    /// 2. Either is `.loading` → `.loading`: a page of the combination is still arriving.
    /// 3. Both are `.fixed` → `.fixed(canRequestAdditionalData: a || b)`: the combination can grow in
    ///    this direction as long as one of its parts can, so a "load more" affordance stays while any
    ///    part has more.
    ///
    /// The operation is associative, so combining three or more directions pairwise gives the same
    /// result in any grouping.
    ///
    /// - Parameter other: The same direction of the other value.
    /// - Returns: The state of this direction of the combined value.
    public func zip(_ other: AdditionalLoadingState) -> AdditionalLoadingState {
        switch (self, other) {
        case (.error, _): self
        case (_, .error): other
        case (.loading, _), (_, .loading): .loading
        case (.fixed(let canRequest), .fixed(let otherCanRequest)):
            .fixed(canRequestAdditionalData: canRequest || otherCanRequest)
        }
    }
}
