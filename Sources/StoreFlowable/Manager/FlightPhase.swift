/// Where an origin fetch of a key (its main flight, or the page flight of one direction) is.
enum FlightPhase: Equatable {
    /// The flight exists (callers join it) but waits for a cancelled flight's origin call to return.
    case pending
    /// The origin is being called.
    case fetching
    /// The origin returned; the result waits for its turn to write the cache.
    case awaitingWrite
    /// The result is being written to the cache; this can no longer be superseded.
    case saving
}
