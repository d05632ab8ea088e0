import StoreFlowable

/// The instances part: two server instances share one cache, as two processes share a PostgreSQL table.
/// Each has its own stores and state manager; instance A updates a user, and B, told of the change (as
/// `PostgresCache.listenForChanges(reloading:)` tells it over LISTEN/NOTIFY), reloads it from the shared
/// cache: B's subscriber sees A's value with no origin call.
func showInstances(_ checks: inout Checks) async {
    let shared = MemoryCache<Int, User>(policy: DemoRepository.policy)
    let origin = DemoOrigin()
    let a = DemoRepository.users(cache: shared, origin: origin)
    let b = DemoRepository.users(cache: shared, origin: origin)
    let edited = User(id: 6, name: "Edsger W.", revision: 7)

    print("instances A and B: one shared cache, a state manager each")
    print("B: for await state in b[6].publish()")
    var watcher = StateWatcher(b[6].publish(), since: .now)
    var state = await watcher.next()
    checks.expect(Shape(state) == .loading(nil), "B should start loading: nothing is cached")
    state = await watcher.next()
    checks.expect(state?.content?.revision == 1, "B should show the fetched user, revision 1")

    print("A: await a[6].update(newData: \(edited))")
    await a[6].update(newData: edited)
    print("B hears of the change (a notification): await b.reloadFromCache(forKey: 6)")
    await b.reloadFromCache(forKey: 6)
    state = await watcher.next()
    watcher.stop()
    let calls = await origin.callCount
    print("origin calls: \(calls) (B's first fetch only: the reload read A's value from the cache)")
    checks.expect(Shape(state) == .completed(edited), "B should show A's update after the reload")
    checks.expect(calls == 1, "the reload should not call the origin (calls: \(calls))")
    print("with PostgresCache, each write notifies the other instances, and")
    print("listenForChanges(reloading:) makes this call for you; PostgresSingleFlight")
    print("gives a key one origin fetch across every instance (Docs/ServerCaches.md)")
}
