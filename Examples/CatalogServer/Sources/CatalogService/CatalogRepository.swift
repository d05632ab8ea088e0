public import CatalogModel
import Logging
public import StoreFlowable

/// The service's repository layer: a `KeyedStore` of products over `ProductCache`, and paged stores of
/// the product list over `ListCache`, both fetching from the upstream.
///
/// - **Products.** `products[id]` is the store of product `id`: `requireData()` serves the cached value
///   while fresh, serves it at once while one background fetch refreshes it inside the
///   stale-while-revalidate window, and in place of a failing upstream inside the stale-if-error window
///   (the cache's `FreshnessPolicy`). A miss joins the key's one fetch, and the fetches of different
///   keys within a few milliseconds go out as one batch request (`BatchedOrigin`), retried with backoff
///   (`FetchPolicy`), at most `upstreamConcurrency` requests at a time (`ConcurrencyLimit`).
/// - **Not found.** A product the upstream does not have is ``CatalogError/productNotFound(id:)``, and
///   is not cached: a product may be created later (a `PUT` through any instance), and caching its
///   absence would need invalidating on every creation. The store remembers the error only for its
///   subscribers (bounded by the manager's `rememberedErrorLimit`), and every read asks the upstream
///   again, through the same batching and limit as any miss.
/// - **Pages.** `GET /products?cursor=` reads the section of the list that holds the cursor through its
///   paged store (``ProductListCallback``), asking for next pages until the section holds a page's worth
///   after the cursor.
/// - **Writes.** ``write(_:)`` stores the product in the upstream, then `update`s the product's store
///   (every subscriber sees the new version; with PostgreSQL, every instance's subscribers too) and the
///   list section holding it.
public struct CatalogRepository<
    ProductCache: KeyedCache<Int, Product>, ListCache: KeyedCache<Int, ProductListRecord>
>: ProductCatalog {
    /// The stores of every product, over the products' cache.
    public let products: KeyedStore<ProductCache>
    /// The cache of the product list's sections.
    public let listCache: ListCache
    /// The manager of every section's paged store.
    let listManager: FlowableDataStateManager<Int>
    /// The upstream.
    let upstream: UpstreamClient
    /// Collects the products' misses into batch requests.
    let batcher: BatchedOrigin<Int, Product>
    /// How many products a page holds.
    let pageSize: Int
    /// How many ids a section of the list spans.
    let sectionLength: Int
    /// The list's freshness.
    let listPolicy: FreshnessPolicy
    /// Whether other instances write the list's cache.
    let listHasOtherWriters: Bool
    /// Where failed cache updates are counted.
    let metrics: CatalogMetrics
    /// Where failed cache updates are logged.
    let logger: Logger

    /// The largest cursor accepted: far beyond any catalogue, and small enough that section arithmetic
    /// never overflows.
    public static var maximumCursor: Int { RequestParameters.maximumCursor }
    /// The most sections one page request reads (more only when the catalogue's ids have long gaps);
    /// a page that stops there is shorter, and its cursor goes on from where it stopped.
    static var maximumSectionsPerPage: Int { 8 }

    /// Makes the repository.
    ///
    /// - Parameters:
    ///   - products: The stores of the products; their fetch loads through `batcher` (directly, or
    ///     through a fleet-wide single flight).
    ///   - listCache: The cache of the list's sections.
    ///   - listManager: The manager of the sections' paged stores.
    ///   - upstream: The upstream.
    ///   - batcher: The batcher the products' fetch uses.
    ///   - configuration: The page size, section length and freshness.
    ///   - listHasOtherWriters: Whether other instances write `listCache`.
    ///   - metrics: Where failed cache updates are counted.
    ///   - logger: Where failed cache updates are logged.
    init(
        products: KeyedStore<ProductCache>, listCache: ListCache, listManager: FlowableDataStateManager<Int>,
        upstream: UpstreamClient, batcher: BatchedOrigin<Int, Product>, configuration: CatalogConfiguration,
        listHasOtherWriters: Bool, metrics: CatalogMetrics, logger: Logger
    ) {
        self.products = products
        self.listCache = listCache
        self.listManager = listManager
        self.upstream = upstream
        self.batcher = batcher
        pageSize = max(1, configuration.pageSize)
        sectionLength = max(1, configuration.listSectionLength)
        listPolicy = configuration.freshness
        self.listHasOtherWriters = listHasOtherWriters
        self.metrics = metrics
        self.logger = logger
    }

    /// Product `id` through its store (`requireData()`).
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The product: cached and fresh, cached inside a window, or fetched.
    /// - Throws: ``CatalogError/productNotFound(id:)``; ``CatalogError/upstreamUnavailable(_:)`` when the
    ///   fetch failed after its retries and no cached value may stand in;
    ///   ``CatalogError/upstreamMalformed(_:)``; ``CatalogError/cacheUnavailable(_:)`` when the fetched
    ///   value could not be cached; `CancellationError` when the calling task is cancelled.
    public func product(id: Int) async throws -> Product {
        do {
            return try await products[id].requireData()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw CatalogError(classifying: error)
        }
    }

    /// Product `id` straight from the upstream, with no store and no limit.
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The product.
    /// - Throws: As ``product(id:)``, without the cache's cases.
    public func directProduct(id: Int) async throws -> Product {
        do {
            return try await upstream.directProduct(id)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw CatalogError(classifying: error)
        }
    }

    /// Every state of product `id`'s store: its `publish()` stream.
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The stream; cancel the task iterating it to end the subscription.
    public func states(ofProduct id: Int) -> AsyncStream<LoadingState<Product>> {
        products[id].publish()
    }

    /// The product keys the manager tracks now.
    ///
    /// - Returns: The count.
    public func trackedKeyCount() async -> Int {
        await products.manager.trackedKeyCount
    }

    /// The ids waiting in the collecting batch.
    public var pendingBatchKeyCount: Int { batcher.pendingKeyCount }
}
