import Foundation
import Hummingbird

/// Makes the upstream's JSON answers.
enum JSONResponse {
    /// Makes an answer whose body is `value` in JSON.
    ///
    /// - Parameters:
    ///   - value: The body.
    ///   - status: The status (200 by default).
    /// - Returns: The answer, with `Content-Type: application/json`.
    /// - Throws: What `JSONEncoder` throws for `value`.
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try JSONEncoder().encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
