/// The store of one callback: reads the cache on the caller's task, reports to the key's state
/// machine in the ``FlowableDataStateManager``, and runs the effects it returns.
///
/// The cache-hit path (`requireData`, `getData` and the cache read) is `@inlinable`, and
/// ``StoreFlowableCallback/create()`` builds the store where the callback's type is known, so a valid
/// cache is served by code specialised for the user's callback: no generic or existential dispatch.
/// Everything that needs the state manager (`awaitFetch` and the rest) stays out of line.
@usableFromInline
struct CallbackStore<Callback: StoreFlowableCallback>: StoreFlowable, FlightRunner {
    @usableFromInline typealias Data = Callback.Data

    @usableFromInline let callback: Callback
    /// How to fetch and merge pages, for the store behind a paged store; `nil` for unpaged data.
    let pages: PageLoader<Data>?

    /// Creates the store of `callback`.
    ///
    /// - Parameters:
    ///   - callback: The user's operations (for paged data, an adapter over them).
    ///   - pages: How to fetch and merge pages, or `nil` for unpaged data.
    init(callback: Callback, pages: PageLoader<Data>?) {
        self.callback = callback
        self.pages = pages
    }

    /// Creates the store of `callback`, for unpaged data.
    @usableFromInline
    init(callback: Callback) {
        self.init(callback: callback, pages: nil)
    }

    @usableFromInline var manager: FlowableDataStateManager<Callback.Key> { callback.flowableDataStateManager }
    var key: Callback.Key { callback.key }
    /// The key as a node of the ``WaitGraph``, for the re-entrancy checks.
    var node: WaitNode { WaitNode(manager, key, Data.self) }
    /// Reports this key's events to the manager's observer.
    @usableFromInline var report: EventReporter {
        EventReporter(observer: manager.observer, key: key, dataType: Data.self)
    }

    // MARK: Reading

    /// Reads the cache with its freshness; a throwing read counts as a miss, and so does an expired value
    /// (it is never served, not even as content).
    @inlinable @inline(__always)
    func readCache() async -> CachedData<Data>? {
        await readCache(reportingTo: manager.observerBox)
    }

    /// Reads the cache with its freshness, for a store whose manager has no observer: a read that threw
    /// is a miss and is reported to nobody.
    @inlinable @inline(__always)
    func readCacheUnobserved() async -> CachedData<Data>? {
        guard let read = try? await callback.loadCachedData(), read.freshness.isUsable else { return nil }
        return read
    }

    /// Reads the cache with its freshness, reporting a read that threw to `observer`.
    ///
    /// Nothing of the store is used after the read's suspension: the observer's box (and the key, copied
    /// only when there is an observer) are taken before it. Reporting from the store itself kept the
    /// whole callback alive across the read, which measured about 40 ns more per cache hit.
    @inlinable @inline(__always)
    func readCache(reportingTo observer: ObserverBox?) async -> CachedData<Data>? {
        let key = observer == nil ? nil : callback.key
        do {
            guard let read = try await callback.loadCachedData(), read.freshness.isUsable else { return nil }
            return read
        } catch {
            if let observer, let key { Self.reportReadFailure(error, of: key, to: observer) }
            return nil
        }
    }

    /// Reports a cache read that threw; out of line, so that the event is not built in the frame of
    /// every read (a larger frame of each subscription's task measured 2 mallocs more per key).
    @usableFromInline @inline(never)
    static func reportReadFailure(_ error: any Error, of key: Callback.Key, to box: ObserverBox) {
        box.observer.observe(StoreEvent(.cacheReadFailed(error), key: key, dataType: Data.self))
    }

    @inlinable
    func getData(from: GettingFrom) async -> Data? {
        try? await requireData(from: from)
    }

    @inlinable
    func requireData(from: GettingFrom) async throws -> Data {
        switch from {
        case .cache:
            // Taken before the read, so that nothing of the store is kept across its suspension.
            let observer = manager.observerBox
            if let observer { return try await requireCachedDataReporting(to: observer.observer) }
            let read: CachedData<Data>?
            do {
                read = try await callback.loadCachedData()
            } catch {
                throw StoreFlowableError.cacheReadFailed(underlying: error)
            }
            // A value inside the stale-while-revalidate window is served, but `.cache` never contacts the
            // origin, so nothing refreshes it.
            guard let read, read.freshness.isServableWithoutFetch else { throw StoreFlowableError.noValidCache }
            return read.value
        case .both:
            let manager = manager
            let epoch = manager.writeEpoch.current
            // Taken before the read, so that nothing of the store is kept across its suspension; `nil`
            // without an observer, and then the read is the plain one.
            let observer = manager.observerBox
            let read = await readCache(reportingTo: observer)
            if let read, read.freshness == .fresh {
                if let observer { reportHit(.fresh, to: observer.observer) }
                return read.value
            }
            return try await serve(read, readAt: epoch)
        case .origin:
            return try await awaitFetch()
        }
    }

    /// `requireData(from: .cache)` with its read reported to `observer`.
    @usableFromInline
    func requireCachedDataReporting(to observer: any StoreEventObserver) async throws -> Data {
        let read: CachedData<Data>?
        do {
            read = try await callback.loadCachedData()
        } catch {
            observer.observe(StoreEvent(.cacheReadFailed(error), key: key, dataType: Data.self))
            throw StoreFlowableError.cacheReadFailed(underlying: error)
        }
        guard let read, read.freshness.isServableWithoutFetch else {
            // An expired value counts as nothing cached.
            let freshness = read.flatMap { $0.freshness.isUsable ? $0.freshness : nil }
            observer.observe(StoreEvent(.cacheMiss(freshness: freshness), key: key, dataType: Data.self))
            throw StoreFlowableError.noValidCache
        }
        observer.observe(StoreEvent(.cacheHit(read.freshness), key: key, dataType: Data.self))
        return read.value
    }

    /// Reports a cache hit to `observer`: inlined into the cache-hit path, so that it is specialised
    /// for the callback with it (a call into the unspecialised store measured about 250 ns per hit).
    @inlinable @inline(__always)
    func reportHit(_ freshness: Freshness, to observer: any StoreEventObserver) {
        observer.observe(StoreEvent(.cacheHit(freshness), key: callback.key, dataType: Data.self))
    }

    /// Serves a cache read that found nothing fresh, as its freshness says: a value inside the
    /// stale-while-revalidate window at once (starting or joining one background fetch), else the fetch's
    /// value, or, inside the stale-if-error window, the cached value when the fetch fails.
    ///
    /// - Parameters:
    ///   - read: What the read found; `nil` for a miss.
    ///   - epoch: The manager's ``FlowableDataStateManager/writeEpoch`` read before the read.
    /// - Returns: The value to serve.
    /// - Throws: What ``awaitFetch()`` throws, unless the stale-if-error window covers it; a cancelled
    ///   caller always gets `CancellationError`.
    @usableFromInline
    func serve(_ read: CachedData<Data>?, readAt epoch: UInt64) async throws -> Data {
        reportRead(read)
        guard let read else { return try await fetchAfterInvalidRead(since: epoch) }
        switch read.freshness {
        case .fresh:
            return read.value
        case .staleWhileRevalidate:
            // Starting (or pinning) the fetch waits for nothing, so it is safe from inside any callback. A
            // cancelled caller still gets the value, but starts nothing (promise 7).
            if !Task.isCancelled {
                await manager.revalidate(key, Data.self, readEpoch: epoch).run(for: self)
            }
            report(.staleServed(.revalidating))
            return read.value
        case .staleIfError:
            do {
                return try await fetchAfterInvalidRead(since: epoch)
            } catch is CancellationError where Task.isCancelled {
                throw CancellationError()
            } catch StoreFlowableError.reentrantCall {
                // A refused call is reported as such, whatever the cache holds.
                throw StoreFlowableError.reentrantCall
            } catch {
                // Read again: while the fetch ran, the value may have left the window or passed `maxAge`,
                // or been replaced. Only a value still inside the window stands in for the error.
                guard let again = await readCache(), again.freshness.isServableOnError else { throw error }
                report(.staleServed(.originFailed(error)))
                return again.value
            }
        case .stale, .expired:
            return try await fetchAfterInvalidRead(since: epoch)
        }
    }

    @usableFromInline
    func validate() async {
        let epoch = manager.writeEpoch.current
        let read = await readCache()
        reportRead(read)
        if let read, read.freshness == .fresh { return }
        _ = try? await fetchAfterInvalidRead(since: epoch)
    }

    /// Reports what a cache read found: a hit when it may be served without waiting for the origin, a
    /// miss otherwise (with no freshness for an expired value, which is never used, as for no value).
    @usableFromInline
    func reportRead(_ read: CachedData<Data>?) {
        let report = report
        guard report.observer != nil else { return }
        if let read, read.freshness.isServableWithoutFetch {
            report(.cacheHit(read.freshness))
        } else {
            report(.cacheMiss(freshness: read.map(\.freshness).flatMap { $0.isUsable ? $0 : nil }))
        }
    }

    /// Fetches after a cache read that found nothing fresh, unless the read missed a write: when a write
    /// replaced the data after `epoch` was read and no fetch runs now, reads the cache again instead of
    /// starting another fetch (at most twice; then it fetches).
    ///
    /// - Parameter epoch: The manager's ``FlowableDataStateManager/writeEpoch`` read before the read.
    /// - Returns: The fresh value a new read found, or the fetched value.
    /// - Throws: What ``awaitFetch()`` throws.
    @usableFromInline
    func fetchAfterInvalidRead(since epoch: UInt64) async throws -> Data {
        var epoch = epoch
        for _ in 0..<2 {
            if let fetched = try await awaitFetch(readEpoch: epoch) { return fetched }
            epoch = manager.writeEpoch.current
            if let read = await readCache(), read.freshness == .fresh { return read.value }
        }
        return try await awaitFetch()
    }

    @usableFromInline
    func refresh() async {
        _ = try? await awaitFetch()
    }

    /// Joins the key's flight (starting one if none runs) and waits for its outcome.
    @usableFromInline
    func awaitFetch() async throws -> Data {
        // Without a read epoch the caller is always joined.
        guard let fetched = try await awaitFetch(readEpoch: nil) else {
            preconditionFailure("a join without a read epoch always joins")
        }
        return fetched
    }

    /// Joins the key's flight (starting one if none runs) and waits for its outcome; after a cache read
    /// (`readEpoch` given), returns `nil` instead when that read may have missed a write.
    func awaitFetch(readEpoch: UInt64?) async throws -> Data? {
        try Task.checkCancellation()
        // From inside a callback of this key (or of a key this key waits for), the fetch could only end
        // after the callback returns: refuse instead of waiting for ever.
        let permit = WaitPermit.forFetch(of: node)
        if permit.isRefused { throw StoreFlowableError.reentrantCall }
        defer { permit.end() }
        let waiter = OneShot<ErasedData>()
        let joined: UInt64?
        let joinedExisting: Bool
        let effects: KeyEffects
        if let readEpoch {
            (joined, joinedExisting, effects) = await manager.join(key, Data.self, waiter, readEpoch: readEpoch)
        } else {
            (joined, joinedExisting, effects) = await manager.join(key, Data.self, waiter)
        }
        // Not a join when this caller created the flight: started now, or held back while a cancelled
        // flight's origin call drains (it reports its own `fetchStarted` once it runs).
        if joinedExisting { report(.joinedFetch) }
        effects.run(for: self)
        guard let id = joined else { return nil }
        do {
            return unerased(try await waiter.value(cancellable: true), as: Data.self)
        } catch is CancellationError where Task.isCancelled {
            // This caller gave up: take it off the list so the fetch is cancelled if nobody else waits.
            await manager.leave(key, Data.self, waiter: id).run(for: self)
            throw CancellationError()
        }
    }

    // MARK: Fetching

    /// Whether a fetched result (of the main flight or of a page) may be written: at once, once its
    /// write turn is granted, or never (the flight was superseded, or its turn rejected).
    ///
    /// The wait ignores cancellation: a flight that queued for the turn always learns its outcome.
    func mayWrite(_ decision: KeySlot.Machine.FetchReturnDecision, writer: OneShot<Bool>) async -> Bool {
        switch decision {
        case .discard: false
        case .write: true
        case .waitForTurn: (try? await writer.value(cancellable: false)) == true
        }
    }

    func runFlight(_ id: UInt64) async {
        let data: Data
        do {
            // A flight cancelled before its task started never calls the origin, but still reports back,
            // so that the state manager knows no origin call of this key is running.
            try Task.checkCancellation()
            let calls = OriginCalls(policy: callback.fetchPolicy, report: report)
            data = try await CallbackScope.run(node, .fetch) {
                try await calls.run { try await callback.fetchDataFromOrigin() }
            }
        } catch {
            await manager.flightFailed(key, Data.self, flight: id, error: StoreFlowableError.fromOrigin(error))
                .run(for: self)
            return
        }
        let writer = OneShot<Bool>()
        let (decision, drained) = await manager.flightReturned(key, Data.self, flight: id, writer: writer)
        drained.run(for: self)
        guard await mayWrite(decision, writer: writer) else { return }
        let effects: KeyEffects
        do {
            let usableUntil = contentExpiry?.usableUntilOfValueWrittenNow()
            try await CallbackScope.run(node, .write) { try await callback.saveDataToCache(newData: data) }
            effects = await manager.flightSaved(key, flight: id, data: data, usableUntil: usableUntil)
        } catch {
            effects = await manager.flightSaveFailed(
                key, Data.self, flight: id, error: StoreFlowableError.cacheWriteFailed(underlying: error))
        }
        effects.run(for: self)
    }

    // MARK: Expiry of what streams show

    /// The `maxAge` and clock of the callback's cache, for a callback that knows them (see
    /// ``ExpiringContentCallback``); `nil` for every other callback.
    ///
    /// The callback's type is checked, not its value: casting the value to the protocol would box it
    /// (one allocation per check for a callback larger than three words).
    var contentExpiry: ContentExpiry? {
        guard let type = Callback.self as? any ExpiringContentCallback.Type else { return nil }
        return contentExpiry(as: type)
    }

    private func contentExpiry<Expiring: ExpiringContentCallback>(as _: Expiring.Type) -> ContentExpiry? {
        (callback as? Expiring)?.contentExpiry
    }

    func hasPassed(_ deadline: CacheTime) -> Bool {
        // Only an expiring callback's reads and writes set a deadline.
        contentExpiry?.hasPassed(deadline) ?? false
    }
}
