/// The state of loading pages in one direction of a key, kept by ``KeyStateMachine``.
///
/// It mirrors the key's main flight: at most one page flight per direction, a cancelled flight drains
/// until its origin call returns, and the result takes its turn to write the cache.
struct PageLoad<PageWaiter> {
    /// The page flight of this direction, if any.
    var flight: (id: UInt64, phase: FlightPhase)?
    /// A cancelled page flight of this direction whose origin call has not returned yet.
    var draining: UInt64?
    /// The error of the last failed page load in this direction; cleared by the next attempt, by a
    /// successful page, and by anything that replaces the data.
    var error: (any Error)?
    /// Callers of `requestNextData`/`requestPrevData` waiting for the page flight to end.
    var waiters: [UInt64: PageWaiter] = [:]

    /// Whether nothing runs or waits in this direction (a remembered error does not count).
    var isUnused: Bool { flight == nil && draining == nil && waiters.isEmpty }

    /// The state a completed value reports for this direction. `.fixed` stands for "nothing loading";
    /// the store turns it into `canRequestAdditionalData: true` when the cached cursor exists.
    var reported: AdditionalLoadingState {
        if flight != nil { return .loading }
        if let error { return .error(rawError: error) }
        return .noMoreData
    }
}
