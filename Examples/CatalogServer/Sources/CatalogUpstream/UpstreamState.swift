public import CatalogModel

/// Everything the upstream remembers between requests: its catalogue and the products written to it,
/// its faults, and the counts of the requests it served.
///
/// An actor, so that the server's concurrent requests read and change it safely. A request takes two
/// turns: ``admit(_:)`` once its input is read and valid (counted, and told how long to wait), then one
/// of the serving methods after the wait, which fails with an ``UpstreamFault`` when the faults at that
/// moment say so. A request whose input is refused is counted by ``reject()`` instead.
public actor UpstreamState {
    /// How many products the catalogue holds: the ids `1...productCount` exist.
    public nonisolated let productCount: Int
    /// The faults injected into every product request.
    public private(set) var control: UpstreamControl
    /// The products written with `PUT`, which replace the generated ones.
    private var written: [Int: Product] = [:]
    /// The counts since the start or the last reset, without ``UpstreamStats/distinctIdsServed``.
    private var counts = UpstreamStats()
    /// The different ids served since the start or the last reset.
    private var servedIDs: Set<Int> = []

    /// Makes the state of a fresh upstream: no product written, every count zero.
    ///
    /// - Parameters:
    ///   - productCount: How many products the catalogue holds (the ids `1...productCount`; 0 or more).
    ///   - control: The faults to start with.
    public init(productCount: Int, control: UpstreamControl) {
        self.productCount = max(0, productCount)
        self.control = control
    }

    /// Whether `id` names a product of the catalogue.
    ///
    /// - Parameter id: A product id.
    /// - Returns: `true` when `id` is in `1...productCount`.
    public nonisolated func contains(_ id: Int) -> Bool {
        id >= 1 && id <= productCount
    }

    // MARK: Faults

    /// Changes the fields of the faults that `update` names.
    ///
    /// - Parameter update: The fields to change.
    /// - Returns: The faults from now on.
    /// - Throws: ``UpstreamRequestError`` (400) when the result is not valid (a negative latency, an
    ///   error rate outside 0...1); the faults are then unchanged.
    public func updateControl(_ update: UpstreamControlUpdate) throws(UpstreamRequestError) -> UpstreamControl {
        let changed = control.applying(update)
        guard changed.isValid else {
            throw .badRequest("latencyMilliseconds must be 0 or more and errorRate from 0 to 1")
        }
        control = changed
        return changed
    }

    // MARK: Counts

    /// The counts of the requests served since the start or the last reset.
    public var stats: UpstreamStats {
        var stats = counts
        stats.distinctIdsServed = servedIDs.count
        return stats
    }

    /// Sets every count back to zero.
    public func resetStats() {
        counts = UpstreamStats()
        servedIDs = []
    }

    /// Counts a product request whose input is valid and tells how long it waits before it is served.
    ///
    /// - Parameter kind: The kind of request.
    /// - Returns: The latency of the current faults.
    public func admit(_ kind: UpstreamRequestKind) -> Duration {
        counts.requests += 1
        switch kind {
        case .product: counts.productRequests += 1
        case .batch: counts.batchRequests += 1
        case .page: counts.pageRequests += 1
        case .write: counts.writeRequests += 1
        }
        return .milliseconds(control.latencyMilliseconds)
    }

    /// Counts a product request refused before it was served (its input was malformed, too large or
    /// incomplete): in ``UpstreamStats/rejectedRequests``, not in ``UpstreamStats/requests``.
    public func reject() {
        counts.rejectedRequests += 1
    }

    // MARK: Serving

    /// The product `id`, as written last or else generated; counted as served when found.
    ///
    /// - Parameter id: The product's id.
    /// - Returns: The product, or `nil` when `id` is outside the catalogue.
    /// - Throws: ``UpstreamFault`` when the current faults fail the request.
    public func product(id: Int) throws(UpstreamFault) -> Product? {
        try checkFaults()
        guard let product = current(id) else { return nil }
        served([id])
        return product
    }

    /// The products of a batch, in the order of `ids`, leaving out the ids outside the catalogue;
    /// counted as served.
    ///
    /// - Parameter ids: The ids asked for.
    /// - Returns: The products found.
    /// - Throws: ``UpstreamFault`` when the current faults fail the request.
    public func batch(ids: [Int]) throws(UpstreamFault) -> ProductBatch {
        try checkFaults()
        let products = ids.compactMap(current)
        served(products.map(\.id))
        return ProductBatch(products: products)
    }

    /// The page of at most `limit` products after the id `cursor`, in id order; counted as served.
    ///
    /// - Parameters:
    ///   - cursor: The last id of the previous page (0 for the first page; 0 or more).
    ///   - limit: The most products the page holds (1 or more).
    /// - Returns: The page, whose ``ProductPage/nextCursor`` is `cursor + limit` while products remain
    ///   after it, and `nil` on the last page.
    /// - Throws: ``UpstreamFault`` when the current faults fail the request.
    public func page(after cursor: Int, limit: Int) throws(UpstreamFault) -> ProductPage {
        try checkFaults()
        guard cursor >= 0, cursor < productCount else { return ProductPage(products: [], nextCursor: nil) }
        // `productCount - cursor` is positive and cannot overflow; `cursor + count` then stays at most
        // `productCount`. (`cursor + limit` overflows for a catalogue over half of `Int.max`.)
        let count = min(max(limit, 1), productCount - cursor)
        let last = cursor + count
        let products = (cursor + 1...last).compactMap(current)
        served(products.map(\.id))
        return ProductPage(products: products, nextCursor: last < productCount ? last : nil)
    }

    /// Stores `product` with a version one higher than the product's current one (generated or
    /// written), whatever version `product` carries.
    ///
    /// - Parameter product: The product to store; its id names the product it replaces.
    /// - Returns: The stored product, or `nil` when its id is outside the catalogue (nothing stored).
    /// - Throws: ``UpstreamFault`` when the current faults fail the request (nothing stored).
    public func write(_ product: Product) throws(UpstreamFault) -> Product? {
        try checkFaults()
        guard let previous = current(product.id) else { return nil }
        var stored = product
        stored.version = previous.version + 1
        written[product.id] = stored
        return stored
    }

    // MARK: Helpers

    /// The product `id` as it stands: written, or generated, or `nil` outside the catalogue.
    private func current(_ id: Int) -> Product? {
        guard contains(id) else { return nil }
        return written[id] ?? Product.generated(id: id)
    }

    /// Fails when the outage is on, or at the error rate.
    private func checkFaults() throws(UpstreamFault) {
        if control.outage { throw .outage }
        if control.errorRate > 0, Double.random(in: 0..<1) < control.errorRate { throw .injectedError }
    }

    /// Counts `ids` as served.
    private func served(_ ids: [Int]) {
        counts.idsServed += ids.count
        servedIDs.formUnion(ids)
    }
}
