/// Why the catalogue service could not answer a request, in the terms its clients see: every case is
/// one HTTP status and one message, answered as `{"error": "<description>"}` (see
/// ``CatalogError/status``).
///
/// The repository (``CatalogRepository``) throws only these, so the routes never see a transport's,
/// a cache's or the library's own error: ``init(classifying:)`` turns each of those into the case a
/// client can act on.
///
/// | case | status |
/// |---|---|
/// | ``invalidProductID(_:)``, ``invalidCursor(_:)``, ``invalidProduct(_:)`` | 400 |
/// | ``productNotFound(id:)``, ``routeNotFound(_:)`` | 404 |
/// | ``upstreamMalformed(_:)`` | 502 |
/// | ``upstreamUnavailable(_:)``, ``cacheUnavailable(_:)`` | 503 |
/// | ``internalFailure(_:)`` | 500 |
/// | ``clientAborted(_:)`` | 499 |
public enum CatalogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path's product id is not a positive integer.
    case invalidProductID(String)
    /// The `cursor` query parameter is not an integer of 0 or more.
    case invalidCursor(String)
    /// A `PUT` body that is not a product in JSON, or whose id is not the path's.
    case invalidProduct(String)
    /// The upstream has no product with this id.
    case productNotFound(id: Int)
    /// No route answers this method and path.
    case routeNotFound(String)
    /// The upstream answered, but not with what its interface promises: a body that does not decode, a
    /// status it never sends, a page out of order.
    case upstreamMalformed(String)
    /// The upstream could not be reached or failed (timeouts, refused connections, 5xx answers, an
    /// outage), after the retries, and no cached value could stand in for it.
    case upstreamUnavailable(String)
    /// The cache could not be written, so the value could not be kept.
    case cacheUnavailable(String)
    /// A failure the service does not expect; the message says what it was.
    case internalFailure(String)
    /// The client closed its connection, or the connection broke, before its request had arrived whole
    /// (a `PUT` body cut short): the client's doing, not a failure of the service, and nobody reads the
    /// answer. Its status is nginx's 499 ("client closed request"), so that the request counts neither
    /// as served nor as a server error; the reason says how the connection ended.
    case clientAborted(String)

    /// The message a client receives, in a sentence.
    ///
    /// The failures of the service's own parts (the upstream, the cache, anything unexpected) say what
    /// failed, never why: their reasons name internal hosts, statements and files, which stay in the
    /// logs (``detail``). A client's own mistakes (a bad id, cursor or body) are explained.
    public var description: String {
        switch self {
        case .invalidProductID(let text): "the product id must be a positive integer, not '\(text)'"
        case .invalidCursor(let text): "the cursor must be an integer of 0 or more, not '\(text)'"
        case .invalidProduct(let reason): "the body is not a valid product: \(reason)"
        case .productNotFound(let id): "product \(id) does not exist"
        case .routeNotFound(let path): "no route for \(path)"
        case .upstreamMalformed: "the upstream answered something unexpected"
        case .upstreamUnavailable: "the upstream is unavailable and no cached value can be served"
        case .cacheUnavailable: "the cache is unavailable"
        case .internalFailure: "internal failure"
        case .clientAborted: "the client closed the connection before its request arrived whole"
        }
    }

    /// The message with its reason, for the service's logs.
    public var detail: String {
        switch self {
        case .upstreamMalformed(let reason), .upstreamUnavailable(let reason), .cacheUnavailable(let reason),
            .internalFailure(let reason), .clientAborted(let reason):
            "\(description): \(reason)"
        case .invalidProductID, .invalidCursor, .invalidProduct, .productNotFound, .routeNotFound:
            description
        }
    }
}
