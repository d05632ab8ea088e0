import Foundation
import Hummingbird

/// Makes the JSON answers of the service's routes.
enum JSONResponseBody {
    /// One encoder for every answer: `JSONEncoder` is `Sendable` and its options are never changed.
    private static let encoder = JSONEncoder()

    /// An answer with `value` encoded as its JSON body.
    ///
    /// - Parameters:
    ///   - value: The body's value.
    ///   - status: The status, 200 by default.
    /// - Returns: The answer, with `Content-Type: application/json` and its length.
    /// - Throws: What the encoder throws for `value`.
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The JSON of `value` as one line of text, for a server-sent event's `data:` field.
    ///
    /// - Parameter value: The value.
    /// - Returns: Its compact JSON (the encoder writes no newline in it).
    /// - Throws: What the encoder throws for `value`.
    static func line(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
