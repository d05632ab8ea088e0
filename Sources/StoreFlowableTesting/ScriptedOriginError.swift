/// The error a ``ScriptedOrigin`` throws when a fetch finds nothing scripted for it.
public enum ScriptedOriginError: Error, Sendable, Equatable {
    /// The queue of scripted results was empty and the origin has no fallback.
    ///
    /// - Parameter call: The 1-based number of the fetch that found nothing to return.
    case exhausted(call: Int)
}
