/// What a page request did: returned by `requestNextData(continueWhenError:)` and
/// `requestPrevData(continueWhenError:)`, so a caller (a server handler, say) learns the outcome
/// without subscribing.
///
/// The same outcome also reaches every `publish()` stream as the direction's state.
public enum PageRequestResult: Sendable {
    /// A page was fetched and merged into the cache (by this request's page flight, or by the one it
    /// joined).
    case loaded
    /// There is no page that way: the cached cursor is `nil`. Nothing was fetched.
    case noMorePages
    /// The cached data was stale, so the first page was fetched again instead of adding a page to stale
    /// data; the cursors are now those of the new first page.
    case refreshedFirstPage
    /// The page load (or the refresh of stale data) failed with this error. For a page it is also the
    /// direction's `.error(rawError:)`, with the content kept.
    case failed(any Error)
    /// A refresh, update or clear started while the page loaded and dropped it; nothing was merged.
    case superseded
    /// The calling task was cancelled before the page ended. The page goes on for the other callers
    /// and streams, and is cancelled when nobody waits for it any more.
    case cancelled
    /// The request did nothing, for this reason.
    case turnedAway(PageRequestRejection)

    /// Whether a page was merged, or the first page fetched again, by this request.
    public var didLoad: Bool {
        switch self {
        case .loaded, .refreshedFirstPage: true
        default: false
        }
    }
}

/// Why a page request did nothing.
public enum PageRequestRejection: Sendable, Equatable {
    /// Nothing is cached yet: load the first page with `publish()`, `refresh()` or `requireData()`.
    case nothingCached
    /// The first page is loading, a refresh runs, or an update or clear is in progress: the page would
    /// be merged into data about to be replaced.
    case dataBeingReplaced
    /// The last refresh failed: the cached data is not settled. Refresh first.
    case lastRefreshFailed
    /// The last page load in that direction failed and the request asked not to retry
    /// (`continueWhenError: false`).
    case lastPageFailed
    /// The request was made from inside a callback of the same key, and would have waited for that
    /// callback's own outcome (see ``StoreFlowableError/reentrantCall``).
    case reentrantCall
}

extension PageRequestResult: CustomStringConvertible {
    /// The result as Swift spells it, for logs: `.loaded`, `.turnedAway(.lastPageFailed)`,
    /// `.failed(<the error's description>)`.
    public var description: String {
        switch self {
        case .loaded: ".loaded"
        case .noMorePages: ".noMorePages"
        case .refreshedFirstPage: ".refreshedFirstPage"
        case .failed(let error): ".failed(\(error))"
        case .superseded: ".superseded"
        case .cancelled: ".cancelled"
        case .turnedAway(let reason): ".turnedAway(.\(reason))"
        }
    }
}
