/// The counts of the requests the upstream served since it started or its last reset: the body of
/// `GET /stats`.
///
/// ``requests`` counts the product requests the upstream served (single, batch, page, write): those
/// whose id, query and body were valid, including those an injected fault failed and the reads of an id
/// outside the catalogue (a 404). A product request refused before it was served (a malformed id,
/// query or body, a body over the limit, a body the client did not send whole) is counted in
/// ``rejectedRequests`` only, so that ``requests`` is what a client of the upstream made it serve.
/// Other routes (`/control`, `/stats`, paths no route answers) are not counted.
public struct UpstreamStats: Codable, Sendable, Equatable, Hashable {
    /// Every product request served: the sum of the four kinds below.
    public var requests: Int
    /// The `GET /products/{id}` requests.
    public var productRequests: Int
    /// The `GET /products?ids=...` requests.
    public var batchRequests: Int
    /// The `GET /products?cursor=...` requests.
    public var pageRequests: Int
    /// The `PUT /products/{id}` requests.
    public var writeRequests: Int
    /// The products served by successful reads (single, batch and page), each time it was served.
    public var idsServed: Int
    /// The different product ids among ``idsServed``.
    public var distinctIdsServed: Int
    /// The product requests refused before they were served: a malformed id, query or body, a body over
    /// the limit, or one the client did not send whole. Not in ``requests``.
    public var rejectedRequests: Int

    /// Makes a set of counts; every count is 0 by default.
    ///
    /// - Parameters:
    ///   - requests: Every product request.
    ///   - productRequests: The single-product reads.
    ///   - batchRequests: The batch reads.
    ///   - pageRequests: The page reads.
    ///   - writeRequests: The writes.
    ///   - idsServed: The products served by successful reads.
    ///   - distinctIdsServed: The different ids among them.
    ///   - rejectedRequests: The product requests refused before they were served.
    public init(
        requests: Int = 0, productRequests: Int = 0, batchRequests: Int = 0, pageRequests: Int = 0,
        writeRequests: Int = 0, idsServed: Int = 0, distinctIdsServed: Int = 0, rejectedRequests: Int = 0
    ) {
        self.requests = requests
        self.productRequests = productRequests
        self.batchRequests = batchRequests
        self.pageRequests = pageRequests
        self.writeRequests = writeRequests
        self.idsServed = idsServed
        self.distinctIdsServed = distinctIdsServed
        self.rejectedRequests = rejectedRequests
    }
}
