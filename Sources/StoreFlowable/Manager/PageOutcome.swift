/// How a page flight ended, as handed to the callers waiting for it.
enum PageOutcome: Sendable {
    /// The page was merged into the cache.
    case loaded
    /// The cache held no cursor that way any more: there was nothing to fetch.
    case noMorePages
    /// The page fetch, or the merge's cache read or write, failed with this error.
    case failed(any Error)
    /// A refresh, update or clear dropped the page before it reached the cache (or nobody wanted it).
    case superseded
}
