import CatalogModel
import Foundation
import Hummingbird

extension CatalogUpstream {
    /// Adds the upstream's routes to `router`.
    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("products/:id") { _, context in
            try await readProduct(idText: context.parameters.get("id"))
        }
        router.get("products") { request, _ in
            let query = request.uri.queryParameters
            return try await readProducts(
                validated { try ProductQuery(ids: query["ids"], cursor: query["cursor"], limit: query["limit"]) })
        }
        router.put("products/:id") { request, context in
            try await writeProduct(idText: context.parameters.get("id"), body: request.body)
        }
        router.get("control") { _, _ in
            try JSONResponse.make(await state.control)
        }
        router.put("control") { request, _ in
            let update = try await decode(UpstreamControlUpdate.self, from: request.body, what: "a control update")
            return try JSONResponse.make(try await state.updateControl(update))
        }
        router.get("stats") { _, _ in
            try JSONResponse.make(await state.stats)
        }
        router.post("stats/reset") { _, _ in
            await state.resetStats()
            return try JSONResponse.make(await state.stats)
        }
    }

    /// `GET /products/{id}`.
    private func readProduct(idText: String?) async throws -> Response {
        let id = try await validated { try productID(idText) }
        try await wait(await state.admit(.product))
        let product: Product?
        do {
            product = try await state.product(id: id)
        } catch {
            throw UpstreamRequestError.fault(error)
        }
        guard let product else { throw UpstreamRequestError.unknownProduct(id) }
        return try JSONResponse.make(product)
    }

    /// `GET /products?ids=...` and `GET /products?cursor=...&limit=...`.
    private func readProducts(_ query: ProductQuery) async throws -> Response {
        switch query {
        case .batch(let ids):
            try await wait(await state.admit(.batch))
            do {
                return try JSONResponse.make(try await state.batch(ids: ids))
            } catch let fault as UpstreamFault {
                throw UpstreamRequestError.fault(fault)
            }
        case .page(let cursor, let limit):
            try await wait(await state.admit(.page))
            do {
                return try JSONResponse.make(try await state.page(after: cursor, limit: limit))
            } catch let fault as UpstreamFault {
                throw UpstreamRequestError.fault(fault)
            }
        }
    }

    /// `PUT /products/{id}`.
    private func writeProduct(idText: String?, body: RequestBody) async throws -> Response {
        let (id, product) = try await validated {
            let id = try productID(idText)
            let product = try await decode(Product.self, from: body, what: "a product")
            guard product.id == id else {
                throw UpstreamRequestError.badRequest("the body's id \(product.id) is not the path's id \(id)")
            }
            return (id, product)
        }
        try await wait(await state.admit(.write))
        let stored: Product?
        do {
            stored = try await state.write(product)
        } catch {
            throw UpstreamRequestError.fault(error)
        }
        guard let stored else { throw UpstreamRequestError.unknownProduct(id) }
        return try JSONResponse.make(stored)
    }

    /// The input of a product request, read by `read`; counted as rejected when `read` throws (the
    /// request is then not served), so that only the requests served are counted as requests.
    ///
    /// - Parameter read: Reads and checks the request's id, query or body.
    /// - Returns: What `read` returns.
    /// - Throws: What `read` throws.
    private func validated<Input>(_ read: () async throws -> Input) async throws -> Input {
        do {
            return try await read()
        } catch {
            await state.reject()
            throw error
        }
    }

    /// The product id of the path.
    private func productID(_ text: String?) throws(UpstreamRequestError) -> Int {
        guard let text, let id = Int(text) else {
            throw .badRequest("the product id must be an integer, not '\(text ?? "")'")
        }
        return id
    }

    /// Waits the injected latency.
    private func wait(_ latency: Duration) async throws {
        if latency > .zero { try await clock.sleep(for: latency) }
    }

    /// Reads a JSON body of at most ``maximumBodySize`` bytes.
    ///
    /// A body the client did not send whole (it closed or reset the connection) is a 499, one that is
    /// not valid HTTP a 400 (``UpstreamRequestError/init(readingBodyFailedWith:)``).
    private func decode<Value: Decodable>(
        _ type: Value.Type, from body: RequestBody, what: String
    ) async throws -> Value {
        var buffer = ByteBuffer()
        do {
            for try await chunk in body {
                guard buffer.readableBytes + chunk.readableBytes <= Self.maximumBodySize else {
                    throw UpstreamRequestError(
                        status: .contentTooLarge, message: "the body is larger than \(Self.maximumBodySize) bytes")
                }
                buffer.writeImmutableBuffer(chunk)
            }
        } catch let error as UpstreamRequestError {
            throw error
        } catch {
            throw UpstreamRequestError(readingBodyFailedWith: error) ?? error
        }
        do {
            return try JSONDecoder().decode(type, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw UpstreamRequestError.badRequest("the body is not \(what) in JSON: \(error.summary)")
        }
    }
}
