import Foundation
import StoreFlowableFoundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An `HTTPTransport` answered in process by a ``DemoOrigin``, standing in for a JSON HTTP API: `GET
/// /users/ID` is 200 with the user as JSON for the origin's five users, 404 for any other id, and 503
/// while the origin is failing. The demo needs no network; the loopback test package runs the same
/// loaders against a real HTTP server.
struct DemoTransport: HTTPTransport {
    let origin: DemoOrigin

    func send(_ request: URLRequest, maxBodySize: Int) async throws -> HTTPResponse {
        guard let path = request.url?.path, path.hasPrefix("/users/"), let id = Int(path.dropFirst(7)) else {
            return HTTPResponse(statusCode: 404, headers: [:], body: Data("no such route".utf8))
        }
        guard (1...5).contains(id) else {
            return HTTPResponse(
                statusCode: 404, headers: ["Content-Type": "text/plain"], body: Data("no such user".utf8))
        }
        do {
            let user = try await origin.fetchUser(id: id)
            return HTTPResponse(
                statusCode: 200, headers: ["Content-Type": "application/json"], body: try JSONEncoder().encode(user))
        } catch is DemoOrigin.Outage {
            return HTTPResponse(statusCode: 503, headers: ["Retry-After": "1"], body: Data())
        }
    }
}
