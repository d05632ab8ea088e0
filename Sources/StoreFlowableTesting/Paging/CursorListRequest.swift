/// One request a ``CursorListAPI`` received, as recorded in ``CursorListAPI/requests``.
public enum CursorListRequest: Sendable, Hashable, CustomStringConvertible {
    /// ``CursorListAPI/latestPage()``: the newest page.
    case latest
    /// ``CursorListAPI/olderPage(before:)`` with this cursor.
    ///
    /// - Parameter cursor: The cursor the client passed.
    case older(ListCursor)
    /// ``CursorListAPI/newerPage(after:)`` with this cursor.
    ///
    /// - Parameter cursor: The cursor the client passed.
    case newer(ListCursor)

    /// A readable description, such as `latest` or `older(ListCursor(older than #40))`.
    public var description: String {
        switch self {
        case .latest: "latest"
        case .older(let cursor): "older(\(cursor))"
        case .newer(let cursor): "newer(\(cursor))"
        }
    }
}
