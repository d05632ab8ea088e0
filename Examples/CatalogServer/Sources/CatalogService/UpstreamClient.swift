import AsyncHTTPClient
import CatalogModel
import Foundation
import StoreFlowable
import StoreFlowableAsyncHTTPClient
import StoreFlowableFoundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The upstream product API as the service calls it: one `SimpleNetworkLoader` per endpoint, over the
/// AsyncHTTPClient transport, each request bounded by the configured timeout.
///
/// Every call but ``directProduct(_:)`` waits for a permit of the shared `ConcurrencyLimit` first, so a
/// burst of misses, pages and writes never has more than `upstreamConcurrency` requests in flight at
/// once, and no more than `upstreamQueueLimit` wait for a permit: a request beyond that fails at once
/// with `ConcurrencyLimitError.queueFull`, which the retry policy does not retry. The limit is taken here, around each HTTP request, rather than in the stores' `FetchPolicy`:
/// a batch is one request for many keys, and the policy would count each key's fetch.
///
/// Failures are the loaders' `NetworkLoaderError`s (the stores' retry policy reads them), except a 404
/// for one product, which is ``CatalogError/productNotFound(id:)``.
struct UpstreamClient: Sendable {
    /// The upstream's base URL.
    let baseURL: URL
    /// The limit on requests in flight.
    let limit: ConcurrencyLimit
    /// Where requests are counted.
    let metrics: CatalogMetrics
    private let productLoader: SimpleNetworkLoader<Int, Product>
    private let batchLoader: SimpleNetworkLoader<[Int], ProductBatch>
    private let pageLoader: SimpleNetworkLoader<Int, ProductPage>
    private let writeLoader: SimpleNetworkLoader<Product, Product>

    /// Makes the loaders of every endpoint.
    ///
    /// - Parameters:
    ///   - baseURL: The upstream's base URL.
    ///   - client: The HTTP client; the caller shuts it down.
    ///   - timeout: The deadline of one request.
    ///   - pageSize: How many products one page request asks for.
    ///   - limit: The limit on requests in flight.
    ///   - metrics: Where requests are counted.
    init(
        baseURL: URL, client: HTTPClient, timeout: Duration, pageSize: Int, limit: ConcurrencyLimit,
        metrics: CatalogMetrics
    ) {
        self.baseURL = baseURL
        self.limit = limit
        self.metrics = metrics
        let transport = AsyncHTTPClientTransport(client: client)
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        @Sendable func request(_ path: String, _ query: [URLQueryItem] = []) throws -> URLRequest {
            var components = URLComponents(url: baseURL.appending(path: path), resolvingAgainstBaseURL: false)
            if !query.isEmpty { components?.queryItems = query }
            guard let url = components?.url else { throw URLError(.badURL) }
            var request = URLRequest(url: url)
            request.timeoutInterval = seconds
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            return request
        }
        productLoader = SimpleNetworkLoader(transport: transport) { id in try request("products/\(id)") }
        batchLoader = SimpleNetworkLoader(transport: transport) { ids in
            try request("products", [URLQueryItem(name: "ids", value: ids.map(String.init).joined(separator: ","))])
        }
        pageLoader = SimpleNetworkLoader(transport: transport) { cursor in
            try request(
                "products",
                [
                    URLQueryItem(name: "cursor", value: String(cursor)),
                    URLQueryItem(name: "limit", value: String(pageSize)),
                ])
        }
        let encoder = JSONEncoder()
        writeLoader = SimpleNetworkLoader(transport: transport) { product in
            var put = try request("products/\(product.id)")
            put.httpMethod = "PUT"
            put.setValue("application/json", forHTTPHeaderField: "Content-Type")
            put.httpBody = try encoder.encode(product)
            return put
        }
    }

    /// The products of `ids`, each with its own outcome: the batch function of the service's
    /// `BatchedOrigin`.
    ///
    /// One id is asked for with `GET /products/{id}`, several with the batch endpoint
    /// (`GET /products?ids=...`, which leaves unknown ids out: they are ``CatalogError/productNotFound(id:)``).
    /// A failed request fails every id of it.
    ///
    /// - Parameter ids: Distinct ids, at most the upstream's batch limit.
    /// - Returns: Every id's product or error.
    /// - Throws: The request's `NetworkLoaderError`, or `CancellationError`.
    func products(_ ids: [Int]) async throws -> [Int: Result<Product, any Error>] {
        if ids.count == 1, let id = ids.first {
            do {
                return [id: .success(try await product(id))]
            } catch let error as CatalogError {
                return [id: .failure(error)]
            }
        }
        let found = try await limited("batch") { try await batchLoader.fetch(ids) }.products
        var results = [Int: Result<Product, any Error>](minimumCapacity: ids.count)
        for id in ids { results[id] = .failure(CatalogError.productNotFound(id: id)) }
        for product in found where results[product.id] != nil { results[product.id] = .success(product) }
        return results
    }

    /// Product `id`, from `GET /products/{id}`.
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The product.
    /// - Throws: ``CatalogError/productNotFound(id:)`` for a 404; otherwise the loader's
    ///   `NetworkLoaderError`, or `CancellationError`.
    func product(_ id: Int) async throws -> Product {
        let product = try await limited("product") {
            try await notFoundAsTyped(id) { try await productLoader.fetch(id) }
        }
        // Cached under `id`: a product of another id would poison that key.
        guard product.id == id else {
            throw CatalogError.upstreamMalformed("GET /products/\(id) answered product \(product.id)")
        }
        return product
    }

    /// The page of products after id `cursor`, from `GET /products?cursor=C&limit=L`, checked: in id
    /// order, after the cursor, continuing after its last product.
    ///
    /// - Parameter cursor: The id the page starts after.
    /// - Returns: The page.
    /// - Throws: ``CatalogError/upstreamMalformed(_:)`` for a page that breaks those rules; otherwise the
    ///   loader's `NetworkLoaderError`, or `CancellationError`.
    func page(after cursor: Int) async throws -> ProductPage {
        let fetched = try await limited("page") { try await pageLoader.fetch(cursor) }
        let ids = fetched.products.map(\.id)
        guard zip([cursor] + ids, ids).allSatisfy({ $0 < $1 }) else {
            throw CatalogError.upstreamMalformed("the page after \(cursor) is not in increasing id order after it")
        }
        if let next = fetched.nextCursor, next < (ids.last ?? cursor + 1) {
            throw CatalogError.upstreamMalformed("the page after \(cursor) continues before its last product")
        }
        return fetched
    }

    /// Stores `product` with `PUT /products/{id}`.
    ///
    /// - Parameter product: The product to store.
    /// - Returns: The stored product, with the version the upstream gave it.
    /// - Throws: ``CatalogError/productNotFound(id:)`` for a 404; otherwise the loader's
    ///   `NetworkLoaderError`, or `CancellationError`.
    func write(_ product: Product) async throws -> Product {
        let stored = try await limited("write") {
            try await notFoundAsTyped(product.id) { try await writeLoader.fetch(product) }
        }
        guard stored.id == product.id else {
            throw CatalogError.upstreamMalformed("PUT /products/\(product.id) answered product \(stored.id)")
        }
        return stored
    }

    /// Product `id` from `GET /products/{id}`, outside the limit: the `/direct` baseline, which calls
    /// the upstream on every request as a service without a store would.
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The product.
    /// - Throws: As ``product(_:)``.
    func directProduct(_ id: Int) async throws -> Product {
        try await counted("direct") { try await notFoundAsTyped(id) { try await productLoader.fetch(id) } }
    }

    /// Runs one request holding a permit of the limit, and counts it.
    private func limited<Value>(_ kind: String, _ request: () async throws -> Value) async throws -> Value {
        try await limit.run { try await counted(kind, request) }
    }

    /// Runs one request and counts it by its outcome.
    private func counted<Value>(_ kind: String, _ request: () async throws -> Value) async throws -> Value {
        do {
            let value = try await request()
            metrics.recordUpstreamRequest(kind: kind, succeeded: true)
            return value
        } catch {
            metrics.recordUpstreamRequest(kind: kind, succeeded: false)
            throw error
        }
    }

    /// Runs `request`, turning its 404 into ``CatalogError/productNotFound(id:)``.
    private func notFoundAsTyped<Value>(_ id: Int, _ request: () async throws -> Value) async throws -> Value {
        do {
            return try await request()
        } catch NetworkLoaderError.unacceptableStatus(404, _, _) {
            throw CatalogError.productNotFound(id: id)
        }
    }
}
