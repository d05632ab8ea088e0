/// One item of the demo's paged list.
struct ListItem: Sendable, Equatable, CustomStringConvertible {
    /// The item's position in the list, from 1.
    let number: Int

    /// The item as `item 7`.
    var description: String { "item \(number)" }
}

/// One page as the demo's list origin serves it, like the body of a paged HTTP response.
struct ListPage: Sendable, Equatable {
    /// The items of the page, in list order.
    let items: [ListItem]
    /// The number of the page after this one, or `nil` when this is the last page.
    let nextPage: Int?
}

/// A simulated remote origin for a list, standing in for a paged HTTP API: serves ``itemCount`` items
/// in pages of ``pageSize`` numbered from 0 (like `PageNumberListAPI` in `StoreFlowableTesting`),
/// answers after a fixed latency, counts its fetches, and fails on demand.
///
/// It counts first-page fetches and page fetches apart, as `Docs/Pagination.md` does: the first page
/// (page 0) is what a store's `fetchDataFromOrigin()` loads, and a page is a later one, loaded by
/// `fetchNextDataFromOrigin(nextCursor:data:)`.
///
/// Like ``DemoOrigin``, it sleeps its latency on an injected clock, and cancelling the calling task
/// cancels the sleep.
actor DemoListOrigin {
    /// How many items the list holds.
    static let itemCount = 47
    /// How many items a full page holds.
    static let pageSize = 10
    /// How many pages the list has, the first one included: the last one is partly filled.
    static let pageCount = (itemCount + pageSize - 1) / pageSize

    private let latency: Duration
    private let clock: any Clock<Duration>
    private var isFailing = false

    /// How many times ``fetchFirstPage()`` was called, whatever the outcome.
    private(set) var firstPageFetchCount = 0

    /// How many times ``fetchPage(number:)`` was called, whatever the outcome: page fetches, which
    /// do not include first-page fetches.
    private(set) var pageFetchCount = 0

    /// Creates an origin that answers every request after `latency` on `clock`.
    init(latency: Duration = .milliseconds(40), clock: any Clock<Duration> = ContinuousClock()) {
        self.latency = latency
        self.clock = clock
    }

    /// Makes the following requests fail with ``DemoOrigin/Outage`` (`true`) or succeed again (`false`).
    func setFailing(_ failing: Bool) {
        isFailing = failing
    }

    /// Fetches the first page, page 0, as a store's first-page fetch does.
    ///
    /// - Throws: ``DemoOrigin/Outage`` while failing; `CancellationError` when the calling task is
    ///   cancelled.
    func fetchFirstPage() async throws -> ListPage {
        firstPageFetchCount += 1
        return try await serve(page: 0)
    }

    /// Fetches page `number`, the cursor the page before it returned, as a store's page fetch does.
    ///
    /// A number outside `1..<pageCount` gives an empty page with no next page.
    ///
    /// - Throws: ``DemoOrigin/Outage`` while failing; `CancellationError` when the calling task is
    ///   cancelled.
    func fetchPage(number: Int) async throws -> ListPage {
        pageFetchCount += 1
        return try await serve(page: number)
    }

    /// Waits for the latency, then returns page `number` or throws ``DemoOrigin/Outage``.
    private func serve(page number: Int) async throws -> ListPage {
        let failsThisCall = isFailing
        try await clock.sleep(for: latency)
        if failsThisCall { throw DemoOrigin.Outage() }
        guard (0..<Self.pageCount).contains(number) else { return ListPage(items: [], nextPage: nil) }
        let first = number * Self.pageSize + 1
        let last = min((number + 1) * Self.pageSize, Self.itemCount)
        return ListPage(
            items: (first...last).map { position in ListItem(number: position) },
            nextPage: number + 1 < Self.pageCount ? number + 1 : nil)
    }
}
