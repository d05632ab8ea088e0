import Hummingbird
import NIOCore

extension LoopbackServer {
    /// The routes of the server (see ``LoopbackServer``), counting each request in `counter`.
    static func makeRouter(counter: RequestCounter, gate: Gate) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("users/:id") { _, context -> Response in
            counter.add("users")
            let id = try context.parameters.require("id", as: Int.self)
            return json(#"{"id":\#(id),"name":"user \#(id)"}"#)
        }
        router.get("not-modified") { _, _ -> Response in
            counter.add("not-modified")
            return Response(status: .notModified)
        }
        // Headers that describe a large resource, without a body: a HEAD's, and a 304's.
        router.head("large") { _, _ -> Response in
            counter.add("large-head")
            return Response(status: .ok, headers: [.contentLength: "\(largeBodySize)"])
        }
        router.get("not-modified-large") { _, _ -> Response in
            counter.add("not-modified-large")
            return Response(status: .notModified, headers: [.contentLength: "\(largeBodySize)"])
        }
        router.get("missing") { _, _ -> Response in
            counter.add("missing")
            return Response(
                status: .notFound, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: "no such user")))
        }
        router.get("broken") { _, _ -> Response in
            counter.add("broken")
            return Response(status: .internalServerError)
        }
        router.get("not-json") { _, _ -> Response in
            counter.add("not-json")
            return Response(
                status: .ok, headers: [.contentType: "text/html"],
                body: .init(byteBuffer: ByteBuffer(string: "<html>maintenance</html>")))
        }
        router.get("slow") { request, _ -> Response in
            counter.add("slow")
            do {
                // Waits, unless the client closes the connection first.
                try await request.body.consumeWithCancellationOnInboundClose { _ in
                    try await Task.sleep(for: slowDelay)
                }
            } catch {
                counter.add("slow-closed")
            }
            return json(#"{"id":0,"name":"slow"}"#)
        }
        router.get("late") { _, _ -> Response in
            counter.add("late")
            try? await Task.sleep(for: lateDelay)
            return json(#"{"id":0,"name":"late"}"#)
        }
        router.get("large") { _, _ -> Response in
            counter.add("large")
            let filler = String(repeating: "x", count: largeBodySize)
            return json(#"{"id":0,"name":"\#(filler)"}"#)
        }
        router.get("gated/:id") { _, context -> Response in
            counter.add("gated")
            let id = try context.parameters.require("id", as: Int.self)
            await gate.wait(atMost: slowDelay)
            return json(#"{"id":\#(id),"name":"user \#(id)"}"#)
        }
        return router
    }

    /// A 200 response with a JSON body.
    private static func json(_ body: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
