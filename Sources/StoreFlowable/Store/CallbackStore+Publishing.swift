// The publishing paths of a callback store: `publish()` streams, each registered with the key's state
// machine and started by a first read of its own.
extension CallbackStore {
    @usableFromInline
    func publish(forceRefresh: Bool) -> AsyncStream<LoadingState<Data>> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: LoadingState<Data>.self, bufferingPolicy: .bufferingNewest(1))
        subscribe(DirectSubscription(continuation), ending: continuation, forceRefresh: forceRefresh)
        return stream
    }

    /// Streams the key's states as `present` shows them; a paged store shows its cached record's data
    /// and cursors this way.
    ///
    /// - Parameters:
    ///   - forceRefresh: When `true`, fetch from the origin even if the cache is valid.
    ///   - present: Turns a state of the key into the state the stream shows.
    /// - Returns: A stream of states, one subscription per call.
    func publish<Shown: Sendable>(
        forceRefresh: Bool, presenting present: @escaping @Sendable (LoadingState<Data>) -> LoadingState<Shown>
    ) -> AsyncStream<LoadingState<Shown>> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: LoadingState<Shown>.self, bufferingPolicy: .bufferingNewest(1))
        subscribe(
            PresentingSubscription(continuation, presenting: present), ending: continuation,
            forceRefresh: forceRefresh)
        return stream
    }

    /// Registers `subscription`, sends its first state from its own cache read, and unregisters it when
    /// the stream of `continuation` ends.
    private func subscribe<Shown: Sendable>(
        _ subscription: Subscription, ending continuation: AsyncStream<LoadingState<Shown>>.Continuation,
        forceRefresh: Bool
    ) {
        // From inside a callback, a stream counts as a wait for this key while it lasts (its consumer may
        // wait for its next state). One that would wait for the callback's own key, or close a cycle of
        // waits, says so and finishes.
        let permit = WaitPermit.forFetch(of: node)
        if permit.isRefused {
            subscription.deliver(.error(content: nil, rawError: StoreFlowableError.reentrantCall), sequence: 1)
            continuation.finish()
            return
        }
        let store = self
        continuation.onTermination = { _ in
            // Takes only the graph's lock, which is never held across a yield or a resume.
            permit.end()
            guard let id = subscription.terminate() else { return }
            Task { await store.manager.unsubscribe(store.key, Data.self, subscriber: id).run(for: store) }
        }
        Task {
            let (registered, effects) = await manager.subscribe(key, Data.self, subscription)
            effects.run(for: self)
            guard let (id, version) = registered else { return }
            // With an observer, the first read is made and reported by a function of its own, so that
            // this task's frame stays as small as without the events hook: its async frame, and the
            // values of generic types it holds, come from the task's allocator, and a larger frame took
            // two more slabs (2 mallocs more per subscription, found with a malloc-counting harness).
            if let observer = manager.observerBox {
                await readFirst(subscriber: id, version: version, forceRefresh: forceRefresh, reportingTo: observer)
                return
            }
            // A value past its stale-while-revalidate point is shown as `.loading(content: stale)` until the
            // fetch returns: subscribers always see that a refresh is running.
            let read = await readCacheUnobserved()
            let expiry = firstReadExpiry(storedAt: read?.storedAt)
            await manager.initialRead(
                key, subscriber: id, version: version, cached: read?.value, isValid: read?.freshness == .fresh,
                forceRefresh: forceRefresh, usableUntil: expiry.usableUntil, now: expiry.now
            ).run(for: self)
        }
    }

    /// A subscription's first read with an observer: reads the cache, reports what it found (a read
    /// that threw, a hit or a miss), hands the value to the manager, and reports a stale value shown
    /// while the fetch it started refreshes it.
    @inline(never)
    private func readFirst(
        subscriber id: UInt64, version: UInt64, forceRefresh: Bool, reportingTo observer: ObserverBox
    ) async {
        let read = await readCache(reportingTo: observer)
        reportRead(read)
        let expiry = firstReadExpiry(storedAt: read?.storedAt)
        await manager.initialRead(
            key, subscriber: id, version: version, cached: read?.value, isValid: read?.freshness == .fresh,
            forceRefresh: forceRefresh, usableUntil: expiry.usableUntil, now: expiry.now
        ).run(for: self)
        // The stream shows the value while the fetch this read started (or joined) refreshes it.
        if read?.freshness == .staleWhileRevalidate { report(.staleServed(.revalidating)) }
    }

    @usableFromInline
    func dataState() async -> DataState {
        await manager.dataState(for: key, of: Data.self)
    }

    /// When a first read's value stored at `storedAt` stops being usable, and the cache's time now, for
    /// a cache with a `maxAge`; both `nil` otherwise. (Not inlined into the subscription's task, whose
    /// async frame would then hold the expiry's clock.)
    @inline(never)
    private func firstReadExpiry(storedAt: CacheTime?) -> (usableUntil: CacheTime?, now: CacheTime?) {
        guard let expiry = contentExpiry else { return (nil, nil) }
        return (storedAt.map { expiry.usableUntil(ofValueStoredAt: $0) }, expiry.now)
    }
}
