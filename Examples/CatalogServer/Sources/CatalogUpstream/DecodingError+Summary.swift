extension DecodingError {
    /// What is wrong with the decoded JSON, in a few words for an error answer: the field and the
    /// problem, without the decoder's internals.
    var summary: String {
        switch self {
        case .keyNotFound(let key, let context):
            return "\(Self.path(context.codingPath + [key])) is missing"
        case .valueNotFound(let type, let context):
            return "\(Self.path(context.codingPath)) is null, not \(type)"
        case .typeMismatch(let type, let context):
            return "\(Self.path(context.codingPath)) is not \(type)"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "not valid JSON" : "\(Self.path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(self)"
        }
    }

    /// `a.b.c` for a coding path, or `the body` for the top level.
    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.isEmpty ? "the body" : codingPath.map(\.stringValue).joined(separator: ".")
    }
}
