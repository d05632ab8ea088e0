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
        }
    }
}
