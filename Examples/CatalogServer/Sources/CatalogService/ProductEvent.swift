public import CatalogModel
public import StoreFlowable

/// One state of a product's store as an `/events` client receives it, as the JSON of one `data:` line:
/// `{"state": "completed", "product": {...}}`, `{"state": "loading"}` or
/// `{"state": "error", "product": {...}, "error": "..."}`.
public struct ProductEvent: Codable, Sendable, Equatable {
    /// The kind of state.
    public enum State: String, Codable, Sendable {
        /// A fetch runs; `product` is the cached value shown meanwhile, if any.
        case loading
        /// The product is current.
        case completed
        /// The last fetch failed; `product` is the last good value, if any, and `error` says why.
        case error
    }

    /// The kind of state.
    public var state: State
    /// The product the state carries: the cached value while loading or after a failure, the current
    /// one when completed; absent when there is none.
    public var product: Product?
    /// Why the last fetch failed, as a client would be told (``CatalogError/description``); present in
    /// error states only.
    public var error: String?

    /// Makes an event from its fields.
    ///
    /// - Parameters:
    ///   - state: The kind of state.
    ///   - product: The product it carries, if any.
    ///   - error: Why the last fetch failed, for an error state.
    public init(state: State, product: Product?, error: String? = nil) {
        self.state = state
        self.product = product
        self.error = error
    }

    /// The event of a store's state.
    ///
    /// - Parameter loadingState: A state of the product's `publish()` stream.
    public init(_ loadingState: LoadingState<Product>) {
        switch loadingState {
        case .loading(let content):
            self.init(state: .loading, product: content)
        case .completed(let content, _, _):
            self.init(state: .completed, product: content)
        case .error(let content, let rawError):
            self.init(state: .error, product: content, error: CatalogError(classifying: rawError).description)
        }
    }
}
