import Foundation
import LoopbackServer
import StoreFlowableAsyncHTTPClient
import StoreFlowableFoundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The HTTP clients every test runs with.
enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession
    case asyncHTTPClient

    /// A transport of this kind.
    func make() -> any HTTPTransport {
        switch self {
        case .urlSession: URLSessionTransport(configuration: .ephemeral)
        case .asyncHTTPClient: AsyncHTTPClientTransport()
        }
    }

    var testDescription: String { rawValue }
}

/// A user as the server's `/users/:id` serves it.
struct User: Codable, Equatable, Sendable {
    let id: Int
    let name: String
}

extension LoopbackServer {
    /// A loader of users from `path` (`/users/ID` by default) of this server.
    func users(
        _ transport: Transport, path: String = "users", timeout: TimeInterval = 20, maxBodySize: Int = 1024 * 1024
    ) -> SimpleNetworkLoader<Int, User> {
        loader(transport, timeout: timeout, maxBodySize: maxBodySize) { id in "\(path)/\(id)" }
    }

    /// A loader of users from the fixed route `path`, whatever the key.
    func fixed(_ transport: Transport, _ path: String, timeout: TimeInterval = 20, maxBodySize: Int = 1024 * 1024)
        -> SimpleNetworkLoader<Int, User>
    {
        loader(transport, timeout: timeout, maxBodySize: maxBodySize) { _ in path }
    }

    /// A loader of users whose request for a key is `GET` of the path `route` returns.
    private func loader(
        _ transport: Transport, timeout: TimeInterval, maxBodySize: Int, route: @escaping @Sendable (Int) -> String
    ) -> SimpleNetworkLoader<Int, User> {
        let base = baseURL
        return SimpleNetworkLoader(transport: transport.make(), maxBodySize: maxBodySize) { id in
            guard let url = URL(string: "\(base)/\(route(id))") else { throw URLError(.badURL) }
            var request = URLRequest(url: url)
            request.timeoutInterval = timeout
            return request
        }
    }
}
