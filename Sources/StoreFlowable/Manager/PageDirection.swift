/// Which end of paged data a page extends.
enum PageDirection: Hashable, Sendable, CaseIterable {
    /// After the last loaded page.
    case next
    /// Before the first loaded page.
    case prev
}
