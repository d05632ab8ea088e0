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

/// A simulated remote origin for a list, standing in for a paged HTTP API: serves
/// ``itemCount`` items in pages of ``pageSize`` numbered from 1, answers after a fixed latency, counts
/// its page fetches, and fails on demand.
///
/// Like ``DemoOrigin``, it sleeps its latency on an injected clock, and cancelling the calling task
/// cancels the sleep.
actor DemoListOrigin {
    /// How many items the list holds.
    static let itemCount = 47
    /// How many items a full page holds.
    static let pageSize = 10
    /// How many pages the list has: the last one is partly filled.
    static let pageCount = (itemCount + pageSize - 1) / pageSize

    private let latency: Duration
    private let clock: any Clock<Duration>
    private var isFailing = false

    /// How many times ``fetchPage(number:)`` was called, whatever the outcome.
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

    /// Fetches page `number`: waits for the latency, then returns the page or throws
    /// ``DemoOrigin/Outage``.
    ///
    /// A number outside `1...pageCount` gives an empty page with no next page.
    ///
    /// - Throws: ``DemoOrigin/Outage`` while failing; `CancellationError` when the calling task is
    ///   cancelled.
    func fetchPage(number: Int) async throws -> ListPage {
        pageFetchCount += 1
        let failsThisCall = isFailing
        try await clock.sleep(for: latency)
        if failsThisCall { throw DemoOrigin.Outage() }
        guard (1...Self.pageCount).contains(number) else { return ListPage(items: [], nextPage: nil) }
        let first = (number - 1) * Self.pageSize + 1
        let last = min(number * Self.pageSize, Self.itemCount)
        return ListPage(
            items: (first...last).map { position in ListItem(number: position) },
            nextPage: number < Self.pageCount ? number + 1 : nil)
    }
}
