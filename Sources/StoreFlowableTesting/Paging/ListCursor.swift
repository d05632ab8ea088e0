/// The opaque cursor of a ``CursorListAPI``: a token the client stores and hands back, like the
/// `before`/`after` tokens of a chat-history endpoint.
///
/// A client must not look inside a cursor or build one: it only compares cursors, stores them (they are
/// `Codable`, so a persistent cache can keep them across a restart) and passes them back to the API
/// that returned them. Each cursor points in one direction: the previous cursor of a page continues
/// with older items, the next cursor with newer ones.
///
/// Its ``description`` is for reading test failures only; its format may change.
public struct ListCursor: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Which way a cursor continues the list.
    enum Direction: String, Sendable, Hashable, Codable {
        /// Items before ``ListCursor/position``: older items.
        case older
        /// Items from ``ListCursor/position`` on: newer items.
        case newer
    }

    /// Which way the cursor continues the list.
    let direction: Direction
    /// The position of the boundary in the server-side list: an older cursor serves the items
    /// before it, a newer cursor the items at and after it.
    let position: Int

    /// Creates the cursor of `direction` at `position`; only ``CursorListAPI`` creates cursors.
    init(_ direction: Direction, at position: Int) {
        self.direction = direction
        self.position = position
    }

    /// A description for reading test failures, such as `ListCursor(older than #40)`.
    public var description: String {
        switch direction {
        case .older: "ListCursor(older than #\(position))"
        case .newer: "ListCursor(newer from #\(position))"
        }
    }
}
