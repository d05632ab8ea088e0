/// The body of every error answer of the upstream and the service: `{"error": "..."}`.
public struct ErrorBody: Codable, Sendable, Equatable, Hashable {
    /// What went wrong, in a sentence for a person.
    public var error: String

    /// Makes an error body.
    ///
    /// - Parameter error: What went wrong, in a sentence for a person.
    public init(error: String) {
        self.error = error
    }
}
