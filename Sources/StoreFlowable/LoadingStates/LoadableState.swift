/// The state of a value that is loaded on demand: nothing yet, loading, failed, or loaded.
///
/// The seed library Processed's `LoadableState`, with the same cases and names. Unlike the seed's, two
/// `.error` states are equal only when their errors are (see ``==(_:_:)``), so an observer that skips
/// equal states never misses a new failure.
public enum LoadableState<Value> {
    /// Nothing was loaded, or the state was reset.
    case absent
    /// A load is running.
    case loading
    /// The last load failed with this error.
    case error(any Error)
    /// The last load produced this value.
    case loaded(Value)

    /// Whether the state is ``absent``.
    public var isAbsent: Bool {
        if case .absent = self { return true }
        return false
    }

    /// Whether the state is ``loading``.
    public var isLoading: Bool {
        if case .loading = self { return true }
        return false
    }

    /// Whether the state is ``error(_:)``.
    public var isError: Bool {
        if case .error = self { return true }
        return false
    }

    /// Whether the state is ``loaded(_:)``.
    public var isLoaded: Bool {
        if case .loaded = self { return true }
        return false
    }

    /// The loaded value, or `nil` in every other state.
    public var data: Value? {
        if case .loaded(let value) = self { return value }
        return nil
    }

    /// The error of a failed load, or `nil` in every other state.
    public var error: (any Error)? {
        if case .error(let error) = self { return error }
        return nil
    }

    /// The same state with its value transformed.
    ///
    /// - Parameter transform: Makes the new value from the loaded one; called only for ``loaded(_:)``.
    /// - Returns: The transformed state; the other states are unchanged.
    /// - Throws: What `transform` throws.
    public func map<NewValue>(_ transform: (Value) throws -> NewValue) rethrows -> LoadableState<NewValue> {
        switch self {
        case .absent: .absent
        case .loading: .loading
        case .error(let error): .error(error)
        case .loaded(let value): .loaded(try transform(value))
        }
    }

    /// The same state with its value transformed, where a `nil` result means there is nothing to show.
    ///
    /// - Parameter transform: Makes the new value from the loaded one; called only for ``loaded(_:)``.
    /// - Returns: The transformed state: ``absent`` when `transform` returns `nil`; the other states are
    ///   unchanged.
    /// - Throws: What `transform` throws.
    public func compactMap<NewValue>(_ transform: (Value) throws -> NewValue?) rethrows -> LoadableState<NewValue> {
        switch self {
        case .absent: .absent
        case .loading: .loading
        case .error(let error): .error(error)
        case .loaded(let value): try transform(value).map { .loaded($0) } ?? .absent
        }
    }
}

extension LoadableState: Sendable where Value: Sendable {}

extension LoadableState: Equatable where Value: Equatable {
    /// Whether two states are the same case with equal contents.
    ///
    /// Two errors are equal when they are of the same type and equal: with `==` for an `Equatable`
    /// error type, otherwise by their full reflected description (`String(reflecting:)`, which shows
    /// every stored property). Errors of different types are never equal.
    ///
    /// - Parameters:
    ///   - lhs: A state.
    ///   - rhs: Another state.
    /// - Returns: Whether they are equal.
    public static func == (lhs: LoadableState, rhs: LoadableState) -> Bool {
        switch (lhs, rhs) {
        case (.absent, .absent), (.loading, .loading): true
        case (.loaded(let left), .loaded(let right)): left == right
        case (.error(let left), .error(let right)): errorsAreEqual(left, right)
        default: false
        }
    }
}

/// Whether two errors are of the same type and equal: by `==` for an `Equatable` type, else by their
/// reflected descriptions.
func errorsAreEqual(_ left: any Error, _ right: any Error) -> Bool {
    guard type(of: left) == type(of: right) else { return false }
    return dynamicEquality(left, right) ?? (String(reflecting: left) == String(reflecting: right))
}
