/// One paging direction of a paged store, read without subscribing: its state and its cached cursor.
///
/// Returned by `nextPageState()` and `prevPageState()`. It is a snapshot: another caller may start,
/// finish or fail a page right after it was read.
public struct PageState<Cursor: Sendable>: Sendable {
    /// The direction's state as `publish()` reports it in a completed state: `.loading` while a page
    /// loads, `.error(rawError:)` after the last page load failed, otherwise
    /// `.fixed(canRequestAdditionalData:)`, `true` exactly when a cursor is cached.
    public let state: AdditionalLoadingState
    /// The cached cursor of the next page that way; `nil` when there is no more page (or nothing is
    /// cached).
    public let cursor: Cursor?

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - state: The direction's state.
    ///   - cursor: The cached cursor that way.
    public init(state: AdditionalLoadingState, cursor: Cursor?) {
        self.state = state
        self.cursor = cursor
    }

    /// Whether a page request that way can load a page now: nothing is loading, the last load did not
    /// fail, and a cursor is cached.
    public var canRequestAdditionalData: Bool {
        if case .fixed(let canRequest) = state { return canRequest }
        return false
    }
}
