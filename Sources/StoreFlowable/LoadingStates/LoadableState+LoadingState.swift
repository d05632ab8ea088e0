extension LoadableState {
    /// The loadable state of a store's state: ``loading`` while a fetch runs, ``loaded(_:)`` with a
    /// completed value, ``error(_:)`` with a failure.
    ///
    /// A `LoadableState` holds a value or a phase, not both: the content a store shows while it fetches
    /// or after a failure (a cached value) is left out. Keep the `LoadingState` to show it.
    ///
    /// - Parameter state: A state of a store's `publish()` stream.
    public init(_ state: LoadingState<Value>) {
        switch state {
        case .loading: self = .loading
        case .completed(let content, _, _): self = .loaded(content)
        case .error(_, let error): self = .error(error)
        }
    }
}

extension LoadingState {
    /// The store state of a loadable state: ``LoadableState/loading`` and ``LoadableState/absent`` are
    /// `.loading` with no content, ``LoadableState/loaded(_:)`` is `.completed` (with no further pages),
    /// ``LoadableState/error(_:)`` is `.error` with no content.
    ///
    /// - Parameter state: A loadable state.
    public init(_ state: LoadableState<Content>) {
        switch state {
        case .absent, .loading: self = .loading(content: nil)
        case .loaded(let value): self = .completed(content: value, next: .noMoreData, prev: .noMoreData)
        case .error(let error): self = .error(content: nil, rawError: error)
        }
    }
}

extension StoreFlowable {
    /// The store's states as ``LoadableState``s (see ``LoadableState/init(_:)``): the same subscription
    /// as ``publish()``, mapped state by state, with no task or stream of its own.
    ///
    /// - Returns: The states of the key, first the current one, then every change.
    public func publishLoadable() -> AsyncMapSequence<AsyncStream<LoadingState<Data>>, LoadableState<Data>> {
        publish().map { LoadableState($0) }
    }
}
