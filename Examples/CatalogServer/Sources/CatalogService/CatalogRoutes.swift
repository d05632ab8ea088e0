import CatalogModel
import Foundation
import Hummingbird
import Logging

/// The service's routes (the table of `Examples/CatalogServer/README.md`), each a thin handler over the
/// repository: read the path and query, call ``ProductCatalog``, answer JSON. Failures are thrown and
/// made answers by ``ErrorResponseMiddleware``.
struct CatalogRoutes: Sendable {
    /// The repository layer.
    let catalog: any ProductCatalog
    /// The service's metrics, for `/metrics` and the request counts.
    let metrics: CatalogMetrics
    /// How long an idle `/events` stream waits before a heartbeat.
    let heartbeat: Duration
    /// The service's logger.
    let logger: Logger

    /// The largest `PUT` body read: a product is about 300 bytes.
    static let maximumBodySize = 64 * 1024

    /// The product `/fixed/products/{id}` answers: the upstream's product 1, made once.
    static let fixedProduct = Product.generated(id: 1)

    /// A router with every route and the middlewares.
    ///
    /// - Returns: The router, for an `Application`.
    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
        router.add(middleware: LogRequestsMiddleware(.debug))
        router.add(middleware: ErrorResponseMiddleware(logger: logger))
        let catalog = catalog
        let metrics = metrics
        let heartbeat = heartbeat
        let logger = logger

        router.get("products/{id}") { _, context in
            let id = try RequestParameters.productID(context.parameters.get("id"))
            return try JSONResponseBody.response(try await catalog.product(id: id))
        }
        router.get("products") { request, _ in
            let cursor = try RequestParameters.cursor(request.uri.queryParameters.get("cursor"))
            return try JSONResponseBody.response(try await catalog.page(after: cursor))
        }
        router.put("products/{id}") { request, context in
            let id = try RequestParameters.productID(context.parameters.get("id"))
            let product = try await Self.decodeProduct(request, id: id)
            return try JSONResponseBody.response(try await catalog.write(product))
        }
        router.get("products/{id}/events") { request, context in
            let id = try RequestParameters.productID(context.parameters.get("id"))
            return ProductEventStream.response(
                to: request, id: id, catalog: catalog, metrics: metrics, heartbeat: heartbeat, logger: logger)
        }
        router.get("metrics") { _, _ in
            let text = metrics.exposition(trackedKeyCount: await catalog.trackedKeyCount())
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }
        router.get("direct/products/{id}") { _, context in
            let id = try RequestParameters.productID(context.parameters.get("id"))
            return try JSONResponseBody.response(try await catalog.directProduct(id: id))
        }
        router.get("fixed/products/{id}") { _, context in
            _ = try RequestParameters.productID(context.parameters.get("id"))
            return try JSONResponseBody.response(Self.fixedProduct)
        }
        router.get("health") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "ok")))
        }
        return router
    }

    /// The product of a `PUT` body: JSON, at most ``maximumBodySize`` bytes, with the path's id.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - id: The path's id.
    /// - Returns: The product to store.
    /// - Throws: ``CatalogError/invalidProduct(_:)``; ``CatalogError/clientAborted(_:)`` when the client
    ///   left before the body was whole; Hummingbird's 413 for a body over the limit.
    private static func decodeProduct(_ request: Request, id: Int) async throws -> Product {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: maximumBodySize)
        } catch {
            throw CatalogError(readingBodyFailedWith: error) ?? error
        }
        let product: Product
        do {
            product = try JSONDecoder().decode(Product.self, from: Data(body.readableBytesView))
        } catch {
            throw CatalogError.invalidProduct("\(error)")
        }
        guard product.id == id else {
            throw CatalogError.invalidProduct("its id \(product.id) is not the path's id \(id)")
        }
        return product
    }
}
