import StoreFlowable

/// The error the state tests put into states; its `id` tells which state an error came from.
struct StateTestError: Error, Equatable, Sendable {
    let id: Int
}

/// An `Equatable` picture of an ``AdditionalLoadingState`` (errors by their ``StateTestError/id``).
enum AdditionalPicture: Equatable, Sendable {
    case fixed(canRequest: Bool)
    case loading
    case error(id: Int?)

    init(_ state: AdditionalLoadingState) {
        switch state {
        case .fixed(let canRequest): self = .fixed(canRequest: canRequest)
        case .loading: self = .loading
        case .error(let error): self = .error(id: (error as? StateTestError)?.id)
        }
    }
}

/// An `Equatable` picture of a ``LoadingState`` (errors by their ``StateTestError/id``), so tests can
/// compare whole states with `#expect(a == b)`.
enum StatePicture<Content: Equatable & Sendable>: Equatable, Sendable {
    case loading(Content?)
    case completed(Content, next: AdditionalPicture, prev: AdditionalPicture)
    case error(Content?, id: Int?)

    /// The snapshot of `.completed(content)`: nothing more to load in either direction.
    static func completed(_ content: Content) -> Self {
        .completed(content, next: .fixed(canRequest: false), prev: .fixed(canRequest: false))
    }

    init(_ state: LoadingState<Content>) {
        switch state {
        case .loading(let content):
            self = .loading(content)
        case .completed(let content, let next, let prev):
            self = .completed(content, next: AdditionalPicture(next), prev: AdditionalPicture(prev))
        case .error(let content, let error):
            self = .error(content, id: (error as? StateTestError)?.id)
        }
    }
}

extension LoadingState where Content: Equatable {
    /// This state as an `Equatable` snapshot.
    var picture: StatePicture<Content> { StatePicture(self) }
}
