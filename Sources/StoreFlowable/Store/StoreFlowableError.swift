/// The errors a store throws or reports itself, as opposed to errors thrown by your callbacks and
/// passed through unchanged.
public enum StoreFlowableError: Error, Sendable {
    /// `requireData(from: .cache)` found no cached value, or one that `needRefresh(cachedData:)` rejects.
    case noValidCache
    /// `loadDataFromCache()` threw during `requireData(from: .cache)`.
    ///
    /// Everywhere else an unreadable cache counts as a miss: the store fetches from the origin and
    /// overwrites the cache with the result.
    ///
    /// - Parameter underlying: The error `loadDataFromCache()` threw.
    case cacheReadFailed(underlying: any Error)
    /// `saveDataToCache(newData:)` threw while storing a fetched value or an update.
    ///
    /// The state becomes `.error(content:rawError:)` with this error and the last good content; callers
    /// waiting for that fetch receive this error.
    ///
    /// - Parameter underlying: The error `saveDataToCache(newData:)` threw.
    case cacheWriteFailed(underlying: any Error)
    /// A callback of a key called into the same key (or into a key whose callbacks are waiting for
    /// it) in a way that would wait for the callback's own outcome, so the call was refused instead of
    /// waiting for ever.
    ///
    /// `requireData` throws it (and `getData` returns `nil`) when called, with an empty or stale cache
    /// or from `.origin`, from inside `fetchDataFromOrigin()` or `saveDataToCache(newData:)` of its own
    /// key, or from inside a callback of another key when that would close a cycle of waits;
    /// `refresh()`, `validate()` and page requests return at once in the same cases; a `publish()`
    /// stream made inside such a callback yields `.error(content: nil, rawError: reentrantCall)` and
    /// finishes. See `Docs/ConcurrencyGuarantees.md` for what is refused and what is served.
    case reentrantCall
    /// The origin threw `CancellationError` although nobody cancelled the fetch (a timeout inside an
    /// HTTP client, say).
    ///
    /// Callers that were not cancelled never receive a bare `CancellationError`: that error means that
    /// their own task was cancelled. The fetch failed with this error instead, like any origin error.
    case originCancelled
}

extension StoreFlowableError {
    /// The error to report for a failed origin call: `error`, except that the origin's own
    /// `CancellationError` becomes ``originCancelled``.
    static func fromOrigin(_ error: any Error) -> any Error {
        error is CancellationError ? StoreFlowableError.originCancelled : error
    }
}

extension StoreFlowableError: CustomStringConvertible {
    /// A one-line description naming the failure and its underlying error.
    public var description: String {
        switch self {
        case .noValidCache:
            "StoreFlowableError.noValidCache: the cache holds no valid value"
        case .cacheReadFailed(let underlying):
            "StoreFlowableError.cacheReadFailed: loadDataFromCache() threw \(underlying)"
        case .cacheWriteFailed(let underlying):
            "StoreFlowableError.cacheWriteFailed: saveDataToCache(newData:) threw \(underlying)"
        case .reentrantCall:
            "StoreFlowableError.reentrantCall: a callback called into its own key in a way that would wait for itself"
        case .originCancelled:
            "StoreFlowableError.originCancelled: the origin threw CancellationError although nobody cancelled it"
        }
    }
}
