public import Foundation
import StoreFlowable

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// The origin of a store that loads values over HTTP: makes a request for a key, sends it, checks the
/// status and decodes the body.
///
/// Pass its ``fetch(_:)`` to a ``KeyedStore`` to serve the values from a cache first, and make loaders
/// over that store:
///
/// ```swift
/// let api = SimpleNetworkLoader<Int, User> { id in
///     URLRequest(url: URL(string: "https://api.example.com/users/\(id)")!)
/// }
/// let users = KeyedStore(cache: MemoryCache<Int, User>(policy: FreshnessPolicy(freshFor: .seconds(60))),
///                        fetch: api.fetch)
/// ```
///
/// Promises:
/// - Only a 2xx response is decoded. Any other status (304 included) throws
///   ``NetworkLoaderError/unacceptableStatus(code:headers:body:)`` with the code, the headers and the
///   start of the body.
/// - A body longer than `maxBodySize` is never read in full: ``NetworkLoaderError/bodyTooLarge(limit:)``.
/// - Every failure is a ``NetworkLoaderError``, except that a caller whose task is cancelled gets
///   `CancellationError` (the request is cancelled with it).
/// - It keeps no state between calls: any number of fetches may run at once (a store runs one per key).
public struct SimpleNetworkLoader<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Sends the requests.
    public let transport: any HTTPTransport
    /// The most body bytes a response may have.
    public let maxBodySize: Int
    private let createRequest: @Sendable (Key) throws -> URLRequest
    private let decode: @Sendable (Data, Key) throws -> Value

    /// Creates a loader that decodes bodies with `decode`.
    ///
    /// - Parameters:
    ///   - transport: Sends the requests; `URLSession` by default.
    ///   - maxBodySize: The most body bytes a response may have; 10 MiB by default.
    ///   - createRequest: Makes the request for a key; what it throws becomes
    ///     ``NetworkLoaderError/invalidRequest(underlying:)``.
    ///   - decode: Makes the value from a 2xx response's body; what it throws becomes
    ///     ``NetworkLoaderError/decodingFailed(underlying:)``.
    public init(
        transport: any HTTPTransport = URLSessionTransport(), maxBodySize: Int = 10 * 1024 * 1024,
        createRequest: @escaping @Sendable (Key) throws -> URLRequest,
        decode: @escaping @Sendable (Data, Key) throws -> Value
    ) {
        self.transport = transport
        self.maxBodySize = max(0, maxBodySize)
        self.createRequest = createRequest
        self.decode = decode
    }

    /// Creates a loader that decodes JSON bodies with `decoder`.
    ///
    /// The loader keeps `decoder` and every fetch uses it, from any task at once: `JSONDecoder` is
    /// `Sendable` (in swift-foundation on Linux and in the SDKs this package builds with on Apple
    /// platforms), its options guarded inside it. Configure it before passing it; an option changed
    /// later applies to the fetches that start after the change.
    ///
    /// - Parameters:
    ///   - transport: Sends the requests; `URLSession` by default.
    ///   - maxBodySize: The most body bytes a response may have; 10 MiB by default.
    ///   - decoder: Decodes the JSON of a 2xx response's body; shared by every fetch, never changed
    ///     by the loader.
    ///   - createRequest: Makes the request for a key; what it throws becomes
    ///     ``NetworkLoaderError/invalidRequest(underlying:)``.
    public init(
        transport: any HTTPTransport = URLSessionTransport(), maxBodySize: Int = 10 * 1024 * 1024,
        decoder: JSONDecoder = JSONDecoder(),
        createRequest: @escaping @Sendable (Key) throws -> URLRequest
    ) where Value: Decodable {
        self.init(transport: transport, maxBodySize: maxBodySize, createRequest: createRequest) { data, _ in
            try decoder.decode(Value.self, from: data)
        }
    }

    /// Fetches the value of `key`: makes its request, sends it, checks the status and decodes the body.
    ///
    /// - Parameter key: The key.
    /// - Returns: The decoded value.
    /// - Throws: ``NetworkLoaderError``; `CancellationError` when the calling task is cancelled.
    @Sendable
    public func fetch(_ key: Key) async throws -> Value {
        let request: URLRequest
        do {
            request = try createRequest(key)
        } catch {
            throw NetworkLoaderError.invalidRequest(underlying: error)
        }
        // A request that may change the server is never sent twice by a retry policy.
        if !Self.isIdempotent(request) { FetchAttempt.current?.forbidRetry() }
        let response: HTTPResponse
        do {
            response = try await transport.send(request, maxBodySize: maxBodySize)
        } catch let error as NetworkLoaderError where !Task.isCancelled {
            throw error
        } catch {
            // A cancelled caller gets a bare CancellationError, whatever the transport made of it; a
            // transport's own cancellation that nobody asked for is a failure like any other.
            if Task.isCancelled { throw CancellationError() }
            throw NetworkLoaderError.transportFailed(underlying: error)
        }
        guard response.isSuccess else {
            throw NetworkLoaderError.unacceptableStatus(
                code: response.statusCode, headers: response.headers,
                body: response.body.prefix(NetworkLoaderError.errorBodyLimit))
        }
        do {
            return try decode(response.body, key)
        } catch {
            throw NetworkLoaderError.decodingFailed(underlying: error)
        }
    }

    /// Whether sending `request` twice has the effect of sending it once (RFC 9110 §9.2.2): every
    /// method but `POST`, `PATCH` and `CONNECT` (and unknown ones).
    static func isIdempotent(_ request: URLRequest) -> Bool {
        let method = (request.httpMethod ?? "GET").uppercased()
        return ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(method)
    }
}
