/// The error a ``CursorListAPI`` throws for a cursor it cannot serve.
public enum CursorListAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The cursor continues the list the other way: a next (newer) cursor was passed to
    /// ``CursorListAPI/olderPage(before:)`` or a previous (older) one to ``CursorListAPI/newerPage(after:)``.
    ///
    /// - Parameter cursor: The cursor the client passed.
    case wrongDirection(ListCursor)

    /// The cursor points outside the server-side list, so this API did not hand it out (it may come from
    /// another API instance).
    ///
    /// - Parameter cursor: The cursor the client passed.
    case unknownCursor(ListCursor)

    /// A readable description, such as `unknown cursor ListCursor(newer from #99)`.
    public var description: String {
        switch self {
        case .wrongDirection(let cursor): "cursor in the wrong direction: \(cursor)"
        case .unknownCursor(let cursor): "unknown cursor \(cursor)"
        }
    }
}
