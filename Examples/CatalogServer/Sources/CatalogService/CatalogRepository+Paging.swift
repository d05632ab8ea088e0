public import CatalogModel
import StoreFlowable

extension CatalogRepository {
    /// The page of the product list after id `cursor`: up to ``pageSize`` products in id order, with the
    /// cursor of the next page.
    ///
    /// The products come from the cached sections of the list (``ProductListSection``). The section
    /// holding `cursor` is read through its paged store: `requireData()` loads its first page once for
    /// every caller, and while it holds fewer than a page's worth of products after `cursor`,
    /// `requestNextData()` loads its next page (one load for all the requests that ask at once). A page
    /// that runs past the section's end continues in the next section.
    ///
    /// - Parameter cursor: The id the page starts after, from 0 to ``maximumCursor``.
    /// - Returns: The page; its `nextCursor` is the last product's id, or `nil` when the list ends with
    ///   it. A page cut short by a long gap in the ids goes on from where it stopped.
    /// - Throws: ``CatalogError/invalidCursor(_:)`` for a cursor out of range; the upstream's and the
    ///   cache's ``CatalogError``s; `CancellationError` when the calling task is cancelled.
    public func page(after cursor: Int) async throws -> ProductPage {
        guard (0...Self.maximumCursor).contains(cursor) else { throw CatalogError.invalidCursor(String(cursor)) }
        var products: [Product] = []
        var after = cursor
        for _ in 0..<Self.maximumSectionsPerPage {
            let wanted = pageSize - products.count
            let section = try await loadedSection(holdingIDsAfter: after, wanting: wanted)
            let found = section.products.filter { $0.id > after }
            products += found.prefix(wanted)
            if products.count == pageSize {
                let isLast = section.endsList && found.count == wanted
                return ProductPage(products: products, nextCursor: isLast ? nil : products.last?.id)
            }
            if section.endsList { return ProductPage(products: products, nextCursor: nil) }
            after = (after / sectionLength + 1) * sectionLength
        }
        return ProductPage(products: products, nextCursor: after)
    }

    /// The paged store of section `index` of the list.
    ///
    /// - Parameter index: The section's number.
    /// - Returns: Its store; cheap to make, and every store of one section shares its state.
    func listStore(section index: Int) -> AnyPaginationStoreFlowable<ProductListSection, Int> {
        ProductListCallback(
            key: index, flowableDataStateManager: listManager, cache: listCache, upstream: upstream,
            sectionLength: sectionLength, policy: listPolicy, cacheHasOtherWriters: listHasOtherWriters
        ).create()
    }

    /// The section holding the ids after `after`, loaded until it holds `wanted` products after it or is
    /// complete.
    ///
    /// - Parameters:
    ///   - after: The id the caller reads after.
    ///   - wanted: How many products after it the caller needs.
    /// - Returns: The section as cached.
    /// - Throws: ``CatalogError``; `CancellationError`.
    private func loadedSection(holdingIDsAfter after: Int, wanting wanted: Int) async throws -> ProductListSection {
        let store = listStore(section: after / sectionLength)
        var section = try await read(store)
        // Every round loads a page of at least one product or ends the section; a first page loaded
        // again (the section went stale) starts over, at most a few times.
        for _ in 0..<(sectionLength + 4) {
            if section.products.lazy.filter({ $0.id > after }).count >= wanted { return section }
            switch await store.requestNextData() {
            case .noMorePages:
                return section
            case .failed(let error):
                throw CatalogError(classifying: error)
            case .cancelled:
                throw CancellationError()
            case .turnedAway(.reentrantCall):
                throw CatalogError.internalFailure("a page was requested from inside the list's own callbacks")
            case .loaded, .refreshedFirstPage, .superseded, .turnedAway:
                // Loaded, or the section was being replaced (or failed last time): read what it holds now.
                section = try await read(store)
            }
        }
        throw CatalogError.upstreamMalformed("the list section after \(after) never completed")
    }

    /// The section's data through its store (`requireData()`).
    private func read(_ store: AnyPaginationStoreFlowable<ProductListSection, Int>) async throws
        -> ProductListSection
    {
        do {
            return try await store.requireData()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw CatalogError(classifying: error)
        }
    }
}
