/// The error a ``PageNumberListAPI`` throws for a page that does not exist.
public enum PageNumberListAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The requested page number is negative or not below the number of pages.
    ///
    /// A cursor the API handed out can point past the end when the server-side list shrank since.
    ///
    /// - Parameters:
    ///   - page: The requested page number.
    ///   - pageCount: The number of pages the list had when the request was answered; page `0` always
    ///     exists, so this is at least 1.
    case pageOutOfRange(page: Int, pageCount: Int)

    /// A readable description, such as `page 12 out of range (10 pages)`.
    public var description: String {
        switch self {
        case .pageOutOfRange(let page, let pageCount):
            "page \(page) out of range (\(pageCount) \(pageCount == 1 ? "page" : "pages"))"
        }
    }
}
