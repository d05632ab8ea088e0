/// How the store behind a paged store finds cursors in its cached record and fetches pages.
///
/// The store's `Data` is the cached record (``PagedData``); the loader hides the user's data and
/// cursor types behind two functions, so the store's fetch pipeline works for any of them.
final class PageLoader<Record: Sendable>: Sendable {
    /// Whether a merge must read the cache again even when no store wrote it since the page's fetch
    /// started (something else writes the cache).
    let rereadsBeforeMerging: Bool
    /// Whether `record` has a cursor in the direction, that is, whether a page exists that way.
    let hasCursor: @Sendable (Record, PageDirection) -> Bool
    /// Fetches the page beyond `record` in the direction and returns how to merge it into the record
    /// the cache holds when the page is written; `nil` when `record` has no cursor that way.
    let fetch: @Sendable (PageDirection, Record) async throws -> (@Sendable (Record) -> Record)?

    /// Creates a loader from its two functions.
    ///
    /// - Parameters:
    ///   - rereadsBeforeMerging: Whether every merge reads the cache again.
    ///   - hasCursor: Whether a record has a cursor in a direction.
    ///   - fetch: Fetches the page beyond a record in a direction and returns how to merge it.
    init(
        rereadsBeforeMerging: Bool,
        hasCursor: @escaping @Sendable (Record, PageDirection) -> Bool,
        fetch: @escaping @Sendable (PageDirection, Record) async throws -> (@Sendable (Record) -> Record)?
    ) {
        self.rereadsBeforeMerging = rereadsBeforeMerging
        self.hasCursor = hasCursor
        self.fetch = fetch
    }
}
