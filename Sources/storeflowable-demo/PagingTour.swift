import StoreFlowable

/// Formats the state of a list's next direction in a few words: `can load`, `no more pages`, `loading`
/// or `error(HTTP 503 (simulated))`.
func describe(next: AdditionalLoadingState) -> String {
    switch next {
    case .fixed(let canRequestAdditionalData): canRequestAdditionalData ? "can load" : "no more pages"
    case .loading: "loading"
    case .error(let rawError): "error(\(rawError))"
    }
}

/// Formats a list's state on one line, counting its items rather than listing them:
/// `completed(content: 20 items, next: can load)`.
func describeList(_ state: LoadingState<[ListItem]>) -> String {
    switch state {
    case .loading(let items):
        "loading(content: \(describeCount(items)))"
    case .completed(let items, let next, _):
        "completed(content: \(describeCount(items)), next: \(describe(next: next)))"
    case .error(let items, let rawError):
        "error(content: \(describeCount(items)), rawError: \(rawError))"
    }
}

/// Formats the size of a list's content: `20 items`, or `nil` when there is none.
private func describeCount(_ items: [ListItem]?) -> String {
    items.map { items in "\(items.count) items" } ?? "nil"
}

/// A completed state of the list with nothing loading in its next direction: what the list shows once
/// a page request has settled.
private struct Settled {
    /// The items loaded so far.
    let items: [ListItem]
    /// The next direction: `.fixed` or `.error`, never `.loading`.
    let next: AdditionalLoadingState

    /// The settled form of `state`, or `nil` when `state` is not completed or its next page is loading.
    init?(_ state: LoadingState<[ListItem]>?) {
        guard case .completed(let items, let next, _)? = state, !next.isLoading else { return nil }
        self.items = items
        self.next = next
    }

    /// How many pages the items fill.
    var pages: Int {
        (items.count + DemoListOrigin.pageSize - 1) / DemoListOrigin.pageSize
    }

    /// Whether the items are exactly the first `count` items of the list, in order.
    func holdsFirst(_ count: Int) -> Bool {
        items == (0..<count).map { index in ListItem(number: index + 1) }
    }

    /// The progress line, with how many pages are loaded: `pages 3/5  items 30/47  next: can load`.
    var progress: String {
        "pages \(pages)/\(DemoListOrigin.pageCount)  items \(items.count)/\(DemoListOrigin.itemCount)  "
            + "next: \(describe(next: next))"
    }
}

extension StateWatcher {
    /// Waits until a state that `isWanted` accepts has been printed, and returns it; the states before
    /// it are printed and skipped. Returns `nil` when the stream ends first.
    mutating func next(where isWanted: (LoadingState<Content>) -> Bool) async -> LoadingState<Content>? {
        while let state = await next() {
            if isWanted(state) { return state }
        }
        return nil
    }
}

extension StateWatcher<[ListItem]> {
    /// Waits until the list has settled (completed, next page not loading), printing the states on the
    /// way, then prints and returns the settled state.
    fileprivate mutating func nextSettled() async -> Settled? {
        let settled = Settled(await next(where: { state in Settled(state) != nil }))
        print(settled?.progress ?? "the stream ended before the list settled")
        return settled
    }
}

/// The paging part: a list of ``DemoListOrigin/itemCount`` items loaded page by page through
/// `requestNextData()`, showing the states of `publish()` and what each request returned, one page
/// fetch shared by 100 concurrent callers, `nextPageState()` answering "is there another page?"
/// without a stream, a failed page that keeps the content and its retry, no fetch past the last page,
/// and a refresh that goes back to the first page.
///
/// Pages are numbered from 0. As in `Docs/Pagination.md`, "page fetches" count the later pages only
/// (`fetchNextDataFromOrigin`); the first page (`fetchDataFromOrigin`) is counted apart.
func showPaging(_ checks: inout Checks) async {
    let origin = DemoListOrigin()
    let cache = DemoListCache()
    let key = "demo-list"
    let store = ListRepository(key: key, cache: cache, origin: origin).create()
    let pageSize = DemoListOrigin.pageSize

    print("// pages are numbered from 0; \"page fetches\" count the pages after page 0")
    print("for await state in store.publish()   // cache empty: fetches page 0")
    var watcher = StateWatcher(store.publish(), since: .now, format: describeList)
    let first = await watcher.next()
    let startsEmpty = if case .loading(let items)? = first { items == nil } else { false }
    checks.expect(startsEmpty, "the first state should be loading(content: nil)")
    let page0 = await watcher.nextSettled()
    checks.expect(
        page0?.holdsFirst(pageSize) == true && page0?.next.canRequestAdditionalData == true,
        "page 0 should hold items 1-\(pageSize) with a next page to load")
    let firstFetches = await origin.firstPageFetchCount
    checks.expect(firstFetches == 1, "publish() should fetch the first page once, not \(firstFetches) times")

    await showSharedPageFetch(store: store, cache: cache, key: key, origin: origin, watcher: &watcher, &checks)
    await showFailedPage(store: store, cache: cache, key: key, origin: origin, watcher: &watcher, &checks)

    var latest = Settled(nil)
    for _ in 0..<DemoListOrigin.pageCount {
        print("await store.requestNextData()   // \(await describeNextRequest(cache: cache, key: key))")
        let result = await store.requestNextData()
        latest = await watcher.nextSettled()
        print("→ \(String(describing: result))")
        checks.expect(result.isLoaded, "each page should return .loaded, not \(String(describing: result))")
        guard latest?.next.canRequestAdditionalData == true else { break }
    }
    checks.expect(
        latest?.holdsFirst(DemoListOrigin.itemCount) == true && latest?.next.canRequestAdditionalData == false,
        "the last page should complete the list with no more pages")

    let beforeEnd = await origin.pageFetchCount
    print("await store.requestNextData()   // \(await describeNextRequest(cache: cache, key: key))")
    let pastEnd = await store.requestNextData()
    let afterEnd = await origin.pageFetchCount
    print("→ \(describe(pastEnd))   page fetches: \(beforeEnd) before, \(afterEnd) after")
    checks.expect(afterEnd == beforeEnd, "requestNextData() past the last page should not fetch")
    checks.expect(pastEnd.isNoMorePages, "past the last page, the result should be .noMorePages")
    let end = await showPageState(store: store, cache: cache, key: key, &checks)
    checks.expect(
        end?.cursor == nil && end?.canRequestAdditionalData == false,
        "after the last page, nextPageState() should have no cursor")

    let firstBeforeRefresh = await origin.firstPageFetchCount
    print("await store.refresh()   // back to the first page, page 0")
    await store.refresh()
    let refreshed = await watcher.nextSettled()
    watcher.stop()
    let firstAfterRefresh = await origin.firstPageFetchCount
    let pagesAfterRefresh = await origin.pageFetchCount
    print("origin fetches in all: first page \(firstAfterRefresh) (publish, refresh),")
    print("  page fetches \(pagesAfterRefresh) (page 2 twice: it failed once)")
    checks.expect(
        refreshed?.holdsFirst(pageSize) == true && refreshed?.next.canRequestAdditionalData == true,
        "refresh() should go back to page 0 with a next page to load")
    checks.expect(firstAfterRefresh == firstBeforeRefresh + 1, "refresh() should fetch the first page once")
    checks.expect(pagesAfterRefresh == afterEnd, "refresh() should fetch no page after the first")
    // Pages 1 to 4, and page 2 once more for the attempt that failed.
    checks.expect(
        pagesAfterRefresh == DemoListOrigin.pageCount,
        "the tour should fetch \(DemoListOrigin.pageCount) pages in all, not \(pagesAfterRefresh)")
}

/// What the next `requestNextData()` will do, from the next cursor the cache holds:
/// `cursor 3: fetches page 3`, or `no cursor: fetches nothing`.
private func describeNextRequest(cache: DemoListCache, key: String) async -> String {
    guard let cursor = await cache.record(key: key)?.nextCursor else { return "no cursor: fetches nothing" }
    let isLast = cursor == DemoListOrigin.pageCount - 1
    return "cursor \(cursor): fetches page \(cursor)" + (isLast ? ", the last" : "")
}

/// Reads the next direction with `nextPageState()`, without a stream, prints it, and checks that its
/// cursor is the one the cache holds.
///
/// - Returns: The page state, or `nil` when the read failed.
@discardableResult
private func showPageState(
    store: AnyPaginationStoreFlowable<[ListItem], Int>, cache: DemoListCache, key: String, _ checks: inout Checks
) async -> PageState<Int>? {
    print("try await store.nextPageState()   // another page? no stream needed")
    let state: PageState<Int>
    do {
        state = try await store.nextPageState()
    } catch {
        checks.expect(false, "nextPageState() should read the cache, not throw \(error)")
        return nil
    }
    let another = state.cursor == nil ? "no" : "yes"
    print("→ state: \(describe(next: state.state)), cursor: \(describe(state.cursor)); another page: \(another)")
    let cached = await cache.record(key: key)?.nextCursor
    checks.expect(state.cursor == cached, "nextPageState() should return the cached cursor \(describe(cached))")
    return state
}

/// Loads page 1 with 100 concurrent `requestNextData()` calls and shows that they cause one page fetch
/// and that each returns once the page is in the cache.
private func showSharedPageFetch(
    store: AnyPaginationStoreFlowable<[ListItem], Int>, cache: DemoListCache, key: String,
    origin: DemoListOrigin, watcher: inout StateWatcher<[ListItem]>, _ checks: inout Checks
) async {
    let callers = 100
    let before = await origin.pageFetchCount
    let request = await describeNextRequest(cache: cache, key: key)
    print("\(callers) tasks at once, each: await store.requestNextData()")
    print("// \(request)")
    let returns = await withTaskGroup(of: (result: String, cached: Int).self) { group in
        for _ in 0..<callers {
            group.addTask {
                let result = await store.requestNextData()
                return (String(describing: result), await cache.record(key: key)?.data.count ?? 0)
            }
        }
        var returns: [(result: String, cached: Int)] = []
        for await returned in group { returns.append(returned) }
        return returns
    }
    let page1 = await watcher.nextSettled()
    let after = await origin.pageFetchCount
    let expected = 2 * DemoListOrigin.pageSize
    let returnedMerged = returns.filter { returned in returned.cached == expected }.count
    let tally = Dictionary(grouping: returns.map(\.result), by: { $0 }).mapValues(\.count)
    print("→ " + tally.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", "))
    print("origin page fetches: \(before) before, \(after) after (one for page 1)")
    print("callers that returned with page 1 in the cache: \(returnedMerged)/\(callers)")
    checks.expect(after == before + 1, "\(callers) callers should share one page fetch, not \(after - before)")
    checks.expect(tally[".loaded"] == callers, "every caller should return .loaded")
    checks.expect(returnedMerged == callers, "every caller should return once page 1 is cached")
    checks.expect(page1?.holdsFirst(expected) == true, "page 1 should be appended after page 0")

    let state = await showPageState(store: store, cache: cache, key: key, &checks)
    checks.expect(
        state?.cursor == 2 && state?.canRequestAdditionalData == true,
        "after page 1, nextPageState() should have cursor 2 and allow a request")
}

/// Fails page 2, showing that the list keeps its content with `next: error(...)`, that
/// `requestNextData(continueWhenError: false)` leaves the error alone, and that a plain
/// `requestNextData()` retries.
private func showFailedPage(
    store: AnyPaginationStoreFlowable<[ListItem], Int>, cache: DemoListCache, key: String,
    origin: DemoListOrigin, watcher: inout StateWatcher<[ListItem]>, _ checks: inout Checks
) async {
    let loaded = 2 * DemoListOrigin.pageSize
    print("origin goes down; await store.requestNextData()")
    print("// \(await describeNextRequest(cache: cache, key: key))")
    await origin.setFailing(true)
    let failure = await store.requestNextData()
    let failed = await watcher.nextSettled()
    print("→ \(describe(failure))")
    checks.expect(
        failed?.holdsFirst(loaded) == true && failed?.next.rawError != nil,
        "a failed page should keep \(loaded) items with next: error(...)")
    checks.expect(failure.isFailed, "the failed page should return .failed, not \(describe(failure))")
    // A cursor is cached but a request would not fetch now: "another page" is not "can request".
    let state = await showPageState(store: store, cache: cache, key: key, &checks)
    checks.expect(
        state?.cursor == 2 && state?.canRequestAdditionalData == false,
        "after a failed page, nextPageState() should keep cursor 2 and not allow a request")

    let before = await origin.pageFetchCount
    print("await store.requestNextData(continueWhenError: false)")
    let kept = await store.requestNextData(continueWhenError: false)
    let after = await origin.pageFetchCount
    print("→ \(describe(kept))   page fetches: \(before) before, \(after) after")
    checks.expect(after == before, "continueWhenError: false should not retry a failed page")
    checks.expect(
        describe(kept) == ".turnedAway(.lastPageFailed)",
        "continueWhenError: false should be turned away with .lastPageFailed, not \(describe(kept))")

    print("origin comes back; await store.requestNextData()   // retries page 2")
    await origin.setFailing(false)
    let retry = await store.requestNextData()
    let retried = await watcher.nextSettled()
    print("→ \(describe(retry))")
    checks.expect(retry.isLoaded, "the retry should return .loaded, not \(describe(retry))")
    checks.expect(
        retried?.holdsFirst(loaded + DemoListOrigin.pageSize) == true,
        "the retry should append page 2")
}

extension PageRequestResult {
    /// Whether the request returned `.loaded`.
    var isLoaded: Bool {
        if case .loaded = self { return true }
        return false
    }

    /// Whether the request returned `.noMorePages`.
    var isNoMorePages: Bool {
        if case .noMorePages = self { return true }
        return false
    }

    /// Whether the request returned `.failed`.
    var isFailed: Bool {
        if case .failed = self { return true }
        return false
    }
}
