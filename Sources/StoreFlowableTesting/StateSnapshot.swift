public import StoreFlowable

/// An `Equatable` copy of a `LoadingState`, for asserting whole sequences of states in one `#expect`.
///
/// Errors are compared by `String(describing:)`, so give your test errors a readable description.
/// A completed state with nothing more to load in either direction is ``completed(_:)``; any other
/// completed state is ``completedPaging(_:next:prev:)``. The two spellings of the former compare
/// equal: `.completedPaging(v, next: .noMoreData, prev: .noMoreData) == .completed(v)`.
///
/// ```swift
/// #expect(recorder.snapshots == [.loading(nil), .completed("fresh")])
/// #expect(store.currentState.snapshot == .error("stale", "offline"))
/// ```
public enum StateSnapshot<Value: Equatable & Sendable>: Equatable, Sendable, CustomStringConvertible {
    /// `LoadingState.loading(content:)`.
    ///
    /// - Parameter content: The content the state carries.
    case loading(Value?)
    /// `LoadingState.completed(content:next:prev:)` with nothing more to load in either direction.
    ///
    /// - Parameter content: The content the state carries.
    case completed(Value)
    /// `LoadingState.completed(content:next:prev:)` with more to load, or loading, in some direction.
    ///
    /// - Parameters:
    ///   - content: The content the state carries.
    ///   - next: The state of the next page.
    ///   - prev: The state of the previous page.
    case completedPaging(Value, next: AdditionalSnapshot, prev: AdditionalSnapshot)
    /// `LoadingState.error(content:rawError:)`.
    ///
    /// - Parameters:
    ///   - content: The content the state carries.
    ///   - error: `String(describing:)` of the raw error.
    case error(Value?, String)

    /// Copies `state`, describing its errors with `String(describing:)`.
    ///
    /// - Parameter state: The state to copy.
    public init(_ state: LoadingState<Value>) {
        switch state {
        case .loading(let content):
            self = .loading(content)
        case .completed(let content, let next, let prev):
            self = Self.completed(content, next: AdditionalSnapshot(next), prev: AdditionalSnapshot(prev))
        case .error(let content, let error):
            self = .error(content, String(describing: error))
        }
    }

    /// The completed snapshot in its canonical spelling: ``completed(_:)`` when neither direction has
    /// more to load, ``completedPaging(_:next:prev:)`` otherwise.
    private static func completed(
        _ content: Value, next: AdditionalSnapshot, prev: AdditionalSnapshot
    ) -> StateSnapshot {
        next == .noMoreData && prev == .noMoreData
            ? .completed(content) : .completedPaging(content, next: next, prev: prev)
    }

    /// This snapshot in its canonical spelling, so that equal states compare equal.
    private var canonical: StateSnapshot {
        if case .completedPaging(let content, let next, let prev) = self {
            return Self.completed(content, next: next, prev: prev)
        }
        return self
    }

    /// Whether two snapshots describe the same state.
    ///
    /// - Parameters:
    ///   - lhs: A snapshot.
    ///   - rhs: Another snapshot.
    /// - Returns: `true` when the cases, contents, directions and error descriptions are equal,
    ///   treating ``completed(_:)`` as ``completedPaging(_:next:prev:)`` with nothing more to load.
    public static func == (lhs: StateSnapshot, rhs: StateSnapshot) -> Bool {
        switch (lhs.canonical, rhs.canonical) {
        case (.loading(let left), .loading(let right)):
            left == right
        case (.completed(let left), .completed(let right)):
            left == right
        case (
            .completedPaging(let left, let leftNext, let leftPrev),
            .completedPaging(let right, let rightNext, let rightPrev)
        ):
            left == right && leftNext == rightNext && leftPrev == rightPrev
        case (.error(let left, let leftError), .error(let right, let rightError)):
            left == right && leftError == rightError
        default:
            false
        }
    }

    /// The case as a test would write it, such as `.error("stale", "offline")`.
    public var description: String {
        switch self {
        case .loading(let content):
            ".loading(\(describeContent(content)))"
        case .completed(let content):
            ".completed(\(describeContent(content)))"
        case .completedPaging(let content, let next, let prev):
            ".completedPaging(\(describeContent(content)), next: \(next), prev: \(prev))"
        case .error(let content, let error):
            ".error(\(describeContent(content)), \(String(reflecting: error)))"
        }
    }
}
