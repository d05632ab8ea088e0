import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import StoreFlowableFoundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An `HTTPTransport` over AsyncHTTPClient, for server apps that already use it: pass it as the
/// `transport:` of a `SimpleNetworkLoader`.
///
/// It streams the body and stops at the limit, maps timeouts and refused connections to their
/// `NetworkLoaderError`, and turns the caller's cancellation into `CancellationError`. A refused
/// connection is reported at the request's deadline: the client retries until then, unless its
/// `connectionPool.retryConnectionEstablishment` is `false`.
public struct AsyncHTTPClientTransport: HTTPTransport {
    private let client: HTTPClient

    /// Creates a transport that sends its requests with `client` (the shared client by default).
    ///
    /// - Parameter client: The client; the transport does not shut it down.
    public init(client: HTTPClient = .shared) {
        self.client = client
    }

    /// Sends `request` and reads at most `maxBodySize` body bytes.
    ///
    /// - Parameters:
    ///   - request: The request; its `timeoutInterval` is the deadline of the whole exchange.
    ///   - maxBodySize: The most body bytes to read.
    /// - Returns: The response.
    /// - Throws: `NetworkLoaderError`, or `CancellationError` when the calling task is cancelled.
    public func send(_ request: URLRequest, maxBodySize: Int) async throws -> HTTPResponse {
        guard let url = request.url?.absoluteString else {
            throw NetworkLoaderError.transportFailed(underlying: HTTPClientError.invalidURL)
        }
        var outgoing = HTTPClientRequest(url: url)
        outgoing.method = .init(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            outgoing.headers.add(name: name, value: value)
        }
        if let body = request.httpBody {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            let response = try await client.execute(outgoing, timeout: Self.deadline(of: request))
            // A HEAD's, a 204's or a 304's Content-Length describes the resource: no body follows.
            let hasBody = outgoing.method != .HEAD && ![204, 304].contains(response.status.code)
            if hasBody, let length = response.headers.first(name: "content-length").flatMap(Int.init),
                length > maxBodySize
            {
                throw NetworkLoaderError.bodyTooLarge(limit: maxBodySize)
            }
            var body = Data()
            for try await chunk in response.body {
                guard body.count + chunk.readableBytes <= maxBodySize else {
                    throw NetworkLoaderError.bodyTooLarge(limit: maxBodySize)
                }
                body.append(contentsOf: chunk.readableBytesView)
            }
            var headers: [String: String] = [:]
            for (name, value) in response.headers {
                headers[name.lowercased()] = headers[name.lowercased()].map { "\($0), \(value)" } ?? value
            }
            return HTTPResponse(statusCode: Int(response.status.code), headers: headers, body: body)
        } catch let error as NetworkLoaderError {
            throw error
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw Self.loaderError(for: error)
        }
    }

    /// The request's `timeoutInterval` as the client's timeout, to the millisecond (a day at most).
    private static func deadline(of request: URLRequest) -> TimeAmount {
        let seconds = request.timeoutInterval
        guard seconds.isFinite, seconds < 86_400 else { return .hours(24) }
        return .milliseconds(Int64(max(seconds, 0) * 1_000))
    }

    /// The loader's error for a failure of the client.
    private static func loaderError(for error: any Error) -> NetworkLoaderError {
        switch error {
        case let error as HTTPClientError
        where [.deadlineExceeded, .connectTimeout, .readTimeout, .writeTimeout].contains(error):
            return .timedOut
        case let error as NIOConnectionError
        where error.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }:
            return .connectionRefused
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            return .connectionRefused
        default:
            return .transportFailed(underlying: error)
        }
    }
}
