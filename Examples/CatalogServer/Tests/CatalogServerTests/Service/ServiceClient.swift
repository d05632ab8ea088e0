import AsyncHTTPClient
import CatalogModel
import Foundation
import Hummingbird

/// Calls a service under test over HTTP, through AsyncHTTPClient.
///
/// Its own client, with room for hundreds of connections to one host, so that a test's concurrent
/// requests reach the service at once instead of queueing in the client's pool (8 by default).
enum ServiceClient {
    /// An answer: its status, body and content type.
    struct Answer: Sendable {
        /// The status code.
        let status: Int
        /// The body.
        let body: ByteBuffer
        /// The `Content-Type` header.
        let contentType: String?

        /// The body as text.
        var text: String { String(buffer: body) }

        /// The body decoded from JSON.
        ///
        /// - Parameter type: The type to decode.
        /// - Returns: The value.
        /// - Throws: What the decoder throws.
        func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
            try JSONDecoder().decode(type, from: Data(body.readableBytesView))
        }

        /// The `error` of a JSON error body.
        ///
        /// - Returns: The message.
        /// - Throws: When the body is not `{"error": "..."}`.
        func errorMessage() throws -> String {
            try decode(ErrorBody.self).error
        }
    }

    /// The client every test shares; a `static let`, never shut down, as `HTTPClient.shared` is.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 512)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Sends one request and reads the whole answer.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - url: The whole URL.
    ///   - body: A JSON body, if any.
    /// - Returns: The answer.
    /// - Throws: Why the exchange failed (every status is an answer).
    static func call(_ method: String, _ url: String, body: String? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        let collected = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return Answer(
            status: Int(response.status.code), body: collected,
            contentType: response.headers.first(name: "Content-Type"))
    }

    /// Sends one request with `value` as its JSON body.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - url: The whole URL.
    ///   - value: The body's value.
    /// - Returns: The answer.
    /// - Throws: Why the exchange failed.
    static func call(_ method: String, _ url: String, json value: some Encodable) async throws -> Answer {
        try await call(method, url, body: String(decoding: try JSONEncoder().encode(value), as: UTF8.self))
    }
}
