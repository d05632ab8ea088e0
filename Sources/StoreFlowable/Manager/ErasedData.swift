/// The type in which the state manager keeps a key's data: the store's `Data` in an existential.
///
/// The manager, the state machine it runs for each key and the effects it returns are then compiled
/// once, for concrete types, inside the library. Were they generic over the user's `Data`, every
/// transition would run unspecialised and look up the metadata of each generic type it touches at run
/// time (a hash-table lookup each), which profiles showed to be about a quarter of the time of a
/// `publish()` round trip. The store converts at the boundary: values go in as they are, and come out
/// through ``unerased(_:as:)``.
typealias ErasedData = any Sendable

/// Takes a value the state manager kept back out as the data type of the store that handed it in.
///
/// - Parameters:
///   - value: A value from the slot of a key of data type `Data`.
///   - dataType: The store's `Data` type.
/// - Returns: The value as a `Data`.
func unerased<Data: Sendable>(_ value: ErasedData, as dataType: Data.Type = Data.self) -> Data {
    // Safe: the manager keeps one slot per key *and* data type (its `SlotKey` holds
    // `ObjectIdentifier(Data.self)`), and every value a store hands to its slot (a cache read, a fetched
    // or saved value, an update, a merged page) is of the store's `Data` type. So every value that comes
    // back out of a slot, in a state or a waiter's outcome, is a `Data`; the cast cannot fail.
    guard let data = value as? Data else {
        preconditionFailure("a key's slot held a \(type(of: value)), not the store's \(Data.self)")
    }
    return data
}

extension LoadingState where Content == ErasedData {
    /// The state with its content taken back out as the store's data type (see ``unerased(_:as:)``).
    ///
    /// Written out rather than through `mapContent`: it runs once per subscriber and emission, in code
    /// that is not specialised for `Data`, where every closure and generic call costs.
    ///
    /// - Parameter dataType: The store's `Data` type.
    /// - Returns: The same state, of the store's type.
    func typed<Data: Sendable>(as dataType: Data.Type) -> LoadingState<Data> {
        switch self {
        case .completed(let content, let next, let prev):
            .completed(content: unerased(content, as: Data.self), next: next, prev: prev)
        case .loading(let content?):
            .loading(content: unerased(content, as: Data.self))
        case .loading(nil):
            .loading(content: nil)
        case .error(let content?, let rawError):
            .error(content: unerased(content, as: Data.self), rawError: rawError)
        case .error(nil, let rawError):
            .error(content: nil, rawError: rawError)
        }
    }
}
