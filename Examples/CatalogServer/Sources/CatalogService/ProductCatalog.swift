public import CatalogModel
public import StoreFlowable

/// What the service's routes ask of its repository layer, whatever cache is under it.
///
/// ``CatalogRepository`` is the implementation; the routes and the tests hold it as `any ProductCatalog`
/// so that they need not name its cache types (SQLite or PostgreSQL).
public protocol ProductCatalog: Sendable {
    /// Product `id` through its store: the cached value if it may be served, else one fetch shared by
    /// every caller (see ``CatalogRepository/product(id:)``).
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The product.
    /// - Throws: ``CatalogError``; `CancellationError` when the calling task is cancelled.
    func product(id: Int) async throws -> Product

    /// The page of the product list after id `cursor`, through the paged stores.
    ///
    /// - Parameter cursor: The id the page starts after; 0 for the first page.
    /// - Returns: The page, with the cursor of the next one (`nil` after the last).
    /// - Throws: ``CatalogError``; `CancellationError` when the calling task is cancelled.
    func page(after cursor: Int) async throws -> ProductPage

    /// Stores `product` in the upstream, then updates the cached product and the cached page holding it.
    ///
    /// - Parameter product: The product to store.
    /// - Returns: The stored product, with its new version.
    /// - Throws: ``CatalogError``; `CancellationError` when the calling task is cancelled before the
    ///   upstream answered.
    func write(_ product: Product) async throws -> Product

    /// Product `id` straight from the upstream, with no store: the `/direct` baseline.
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The product.
    /// - Throws: ``CatalogError``; `CancellationError` when the calling task is cancelled.
    func directProduct(id: Int) async throws -> Product

    /// Every state of product `id`'s store (its `publish()` stream): the current one first, then each
    /// change, until the iterating task is cancelled.
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The stream of states.
    func states(ofProduct id: Int) -> AsyncStream<LoadingState<Product>>

    /// How many product keys the store's manager tracks now: keys with subscribers, waiting callers, a
    /// fetch in flight or a remembered error. Zero once every request and stream has ended and nothing
    /// failed.
    ///
    /// - Returns: The count.
    func trackedKeyCount() async -> Int

    /// How many product ids wait in the batch that is collecting ids (for tests and metrics).
    var pendingBatchKeyCount: Int { get }
}
