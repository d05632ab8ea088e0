import CatalogModel
import ServiceLifecycle
import StoreFlowable
import StoreFlowablePostgres

/// The `Service` that keeps this instance's product stores current with the other instances' writes:
/// `listenForChanges(reloading:)` on the shared PostgreSQL cache, until a graceful shutdown or
/// cancellation.
///
/// It holds one connection of the client's pool while it listens, reconnects with backoff when that
/// connection is lost, and after each (re)connection reloads every product key the stores track (changes
/// made while nobody listened are not replayed by PostgreSQL).
struct ProductChangeListener: Service {
    /// The shared cache whose notifications are heard.
    let cache: PostgresCache<Int, Product>
    /// The stores over that cache object to reload.
    let products: KeyedStore<PostgresCache<Int, Product>>

    func run() async throws {
        let cache = cache
        let products = products
        await cancelWhenGracefulShutdown {
            await cache.listenForChanges(reloading: products)
        }
    }
}
