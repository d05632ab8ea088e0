public import CatalogModel
import Logging
import StoreFlowable

extension CatalogRepository {
    /// Stores `product` in the upstream, then updates the caches with the stored product.
    ///
    /// The upstream is the source of truth: once it stored the product, the write has happened, and the
    /// stored product is returned whatever the caches do. Then:
    /// - the product's store is updated (`update(_:)`, under the key's write turn): every subscriber of
    ///   this instance sees the new version, a fetch that began before is dropped, and with PostgreSQL the
    ///   write's notification reloads it in every other instance. A cached version newer than the stored
    ///   one (a later write whose update got there first) is kept.
    /// - the list section holding the product, if cached, gets the new version in place; its cursor is
    ///   kept.
    ///
    /// If a cache update fails, the product's cached value is marked stale instead (the section is
    /// cleared), so that the old version is not served as fresh; the failure is logged and counted
    /// (`catalog_cache_update_failures_total`).
    ///
    /// - Parameter product: The product to store; its id names it.
    /// - Returns: The stored product, with the version the upstream gave it.
    /// - Throws: ``CatalogError/productNotFound(id:)`` when the upstream has no such product;
    ///   ``CatalogError/upstreamUnavailable(_:)`` or ``CatalogError/upstreamMalformed(_:)`` when the
    ///   upstream failed (nothing was stored then, or nothing the service knows of); `CancellationError`
    ///   when the calling task is cancelled before the upstream answered.
    public func write(_ product: Product) async throws -> Product {
        let stored: Product
        do {
            stored = try await upstream.write(product)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw CatalogError(classifying: error)
        }
        await updateProduct(with: stored)
        await updateListSection(with: stored)
        return stored
    }

    /// Makes `stored` the cached product, unless a newer version is cached; marks the cached product stale
    /// when that fails.
    ///
    /// - Parameter stored: The product the upstream stored.
    private func updateProduct(with stored: Product) async {
        let store = products[stored.id]
        do {
            try await store.update { cached in
                if let cached, cached.version > stored.version { throw KeepCached() }
                return stored
            }
        } catch is KeepCached {
            return
        } catch {
            metrics.recordCacheUpdateFailure()
            logger.error(
                "cache update after write failed", metadata: ["product": "\(stored.id)", "error": "\(error)"])
            do {
                try await store.invalidate()
            } catch {
                logger.error(
                    "marking the product stale failed too; it is served until it is no longer fresh",
                    metadata: ["product": "\(stored.id)", "error": "\(error)"])
            }
        }
    }

    /// Puts `stored` in place of its older version in the cached section that holds it, if any.
    ///
    /// - Parameter stored: The product the upstream stored.
    private func updateListSection(with stored: Product) async {
        guard stored.id > 0, stored.id <= Self.maximumCursor else { return }
        let section = listStore(section: (stored.id - 1) / sectionLength)
        do {
            try await section.update { cached in
                guard var cached,
                    let index = cached.products.firstIndex(where: { $0.id == stored.id }),
                    cached.products[index].version < stored.version
                else { throw KeepCached() }
                cached.products[index] = stored
                return cached
            }
        } catch is KeepCached {
            return
        } catch {
            metrics.recordCacheUpdateFailure()
            logger.error(
                "list update after write failed", metadata: ["product": "\(stored.id)", "error": "\(error)"])
            // A paged store's invalidation marks nothing in this cache: drop the section instead, and the
            // next page request loads it again.
            await section.clear()
        }
    }
}

/// Thrown from an `update(_:)` transform to leave the cache as it is (a newer version is cached, or the
/// section is not cached or does not hold the product).
private struct KeepCached: Error {}
