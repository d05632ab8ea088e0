#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A response as an ``HTTPTransport`` returns it: status, headers and body, read in full.
public struct HTTPResponse: Sendable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The response headers, by lowercased name; a header sent more than once has its values joined
    /// with `", "`.
    public var headers: [String: String]
    /// The body, at most the `maxBodySize` the request was sent with.
    public var body: Data

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - statusCode: The HTTP status code.
    ///   - headers: The headers, by name; names are lowercased here.
    ///   - body: The body.
    public init(statusCode: Int, headers: [String: String], body: Data) {
        self.statusCode = statusCode
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }) { first, second in
            "\(first), \(second)"
        }
        self.body = body
    }

    /// Whether the status is a success (2xx).
    public var isSuccess: Bool { (200..<300).contains(statusCode) }
}
