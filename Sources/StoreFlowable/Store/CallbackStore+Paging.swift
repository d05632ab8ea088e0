/// Paging for the store behind a paged store: page requests and the page-flight pipeline.
extension CallbackStore {
    /// Loads the page in `direction` unless the cached record says there is none, and waits for the
    /// page flight to end.
    ///
    /// Reads the cache on the caller's task first: with nothing cached or no cursor that way it returns
    /// at once, without touching the state manager; with stale data it refreshes the first page instead
    /// (and waits for it), so a page is never added to stale data. When the read throws, the page flight
    /// reads again and reports the failure as the direction's error.
    ///
    /// - Parameters:
    ///   - direction: Which end of the data to extend.
    ///   - continueWhenError: Whether to retry after the last page load in `direction` failed.
    /// - Returns: What the request did.
    func requestPage(_ direction: PageDirection, continueWhenError: Bool) async -> PageRequestResult {
        guard let pages else { return .noMorePages }
        // From inside a callback of this key, the page (or the refresh) could only end after the
        // callback returns.
        let permit = WaitPermit.forFetch(of: node)
        if permit.isRefused { return .turnedAway(.reentrantCall) }
        defer { permit.end() }
        do {
            let epoch = manager.writeEpoch.current
            guard let cached = try await callback.loadDataFromCache() else { return .turnedAway(.nothingCached) }
            // No cursor that way: there is no page to continue from.
            guard pages.hasCursor(cached, direction) else { return .noMorePages }
            if await callback.needRefresh(cachedData: cached) {
                do {
                    // A refresh that wrote after the read began counts: no second refresh.
                    _ = try await fetchAfterInvalidRead(since: epoch)
                    return .refreshedFirstPage
                } catch is CancellationError where Task.isCancelled {
                    return .cancelled
                } catch {
                    return .failed(error)
                }
            }
        } catch {
            // Unreadable: the page flight reads again and reports what it finds.
        }
        guard !Task.isCancelled else { return .cancelled }
        let waiter = OneShot<PageOutcome>()
        let (id, effects, rejection) = await manager.requestPage(
            key, Data.self, direction, waiter: waiter, continueWhenError: continueWhenError)
        effects.run(for: self)
        guard let id else { return .turnedAway(rejection ?? .dataBeingReplaced) }
        do {
            switch try await waiter.value(cancellable: true) {
            case .loaded: return .loaded
            case .noMorePages: return .noMorePages
            case .failed(let error): return .failed(error)
            case .superseded: return .superseded
            }
        } catch {
            // Only cancellation resolves a page waiter with an error: take this caller off the list so
            // that the page flight is cancelled if nobody else waits.
            await manager.leavePage(key, Data.self, direction, waiter: id).run(for: self)
            return .cancelled
        }
    }

    /// The state of `direction` as a completed state reports it before the cursor is known: `.loading`,
    /// `.error`, or `.fixed` for "nothing loading".
    func pageStatus(_ direction: PageDirection) async -> AdditionalLoadingState {
        await manager.pageStatus(for: key, Data.self, direction)
    }

    func runPageFlight(_ direction: PageDirection, _ id: UInt64, startVersion: UInt64) async {
        let merge: @Sendable (Data) -> Data
        let cached: Data?
        do {
            // A page flight cancelled before its task started never calls the origin, but still reports
            // back, so that the state manager knows no page call of this direction is running.
            try Task.checkCancellation()
            let node = node
            let calls = OriginCalls(policy: callback.fetchPolicy, report: report)
            let read = try await readCacheForPage()
            cached = read
            let fetched = try await CallbackScope.run(node, .fetch) { () async throws -> (@Sendable (Data) -> Data)? in
                // Checked before the origin calls: with no cursor there is no origin call to limit,
                // retry or report.
                guard let pages, let read, pages.hasCursor(read, direction) else { return nil }
                return try await calls.run { try await pages.fetch(direction, read) }
            }
            guard let fetched else {
                // No cursor that way any more: nothing to fetch.
                await manager.pageFailed(key, Data.self, direction, flight: id, error: nil).run(for: self)
                return
            }
            merge = fetched
        } catch {
            await manager.pageFailed(key, Data.self, direction, flight: id, error: StoreFlowableError.fromOrigin(error))
                .run(for: self)
            return
        }
        let writer = OneShot<Bool>()
        let (decision, drained, readIsCurrent) = await manager.pageReturned(
            key, Data.self, direction, flight: id, writer: writer, startVersion: startVersion)
        drained.run(for: self)
        // When no write completed since the flight started, the cache still holds what it read: merge
        // into that instead of reading again.
        let reusable = readIsCurrent && pages?.rereadsBeforeMerging == false ? cached : nil
        guard await mayWrite(decision, writer: writer) else { return }
        let effects: KeyEffects
        do {
            // The write turn is held: nothing else writes the cache now, so the page is merged into
            // exactly what it holds (which includes a page the other direction wrote meanwhile).
            let merged = try await CallbackScope.run(node, .write) { () async throws -> Data in
                let read = if let reusable { reusable } else { try await readCacheForPage() }
                guard let current = read else { throw StoreFlowableError.noValidCache }
                let merged = merge(current)
                do {
                    try await callback.saveDataToCache(newData: merged)
                } catch {
                    throw StoreFlowableError.cacheWriteFailed(underlying: error)
                }
                return merged
            }
            effects = await manager.pageSaved(key, direction, flight: id, data: merged)
        } catch {
            effects = await manager.pageSaveFailed(key, Data.self, direction, flight: id, error: error)
        }
        effects.run(for: self)
    }

    /// Reads the cached record for a page flight.
    ///
    /// - Throws: ``StoreFlowableError/cacheReadFailed(underlying:)`` when the read throws.
    private func readCacheForPage() async throws -> Data? {
        do {
            return try await callback.loadDataFromCache()
        } catch {
            throw StoreFlowableError.cacheReadFailed(underlying: error)
        }
    }
}
