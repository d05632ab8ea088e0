/// The errors a ``BatchedOrigin`` reports itself, as opposed to the errors its batch function returns or
/// throws, which reach the callers unchanged.
public enum BatchedOriginError: Error, Sendable, CustomStringConvertible {
    /// The batch function returned, but its dictionary had no entry for the key the caller asked for.
    ///
    /// Every caller of that key in that batch gets this error; the other keys of the batch are served
    /// from their own entries. Nothing is remembered: the next load of the key goes to a new batch.
    case missingResult

    /// The error in one line, for logs.
    public var description: String {
        switch self {
        case .missingResult: "the batch function returned no result for the key"
        }
    }
}
