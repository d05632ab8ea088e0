import StoreFlowable

/// The edit part: 100 tasks append to a cached list at once with `update(_:)`, a read-modify-write
/// under the key's write turn, and every append is kept; the cursor is kept too, so paging goes on
/// after the edits.
///
/// "Read, then `update(newData:)`" would race here: two tasks reading the same list would each write
/// it with their own item only, and one append would be lost.
func showEdit(_ checks: inout Checks) async {
    let origin = DemoListOrigin()
    let cache = DemoListCache()
    let key = "demo-edit"
    let store = ListRepository(key: key, cache: cache, origin: origin).create()
    let pageSize = DemoListOrigin.pageSize

    print("_ = try await store.requireData()   // cache empty: fetches page 0")
    do {
        _ = try await store.requireData()
    } catch {
        checks.expect(false, "requireData() should load page 0, not throw \(error)")
        return
    }
    let page0 = (1...pageSize).map { number in ListItem(number: number) }
    checks.expect(await cache.record(key: key)?.data == page0, "page 0 should hold items 1-\(pageSize)")

    let appends = 100
    let added = (1...appends).map { index in ListItem(number: 1000 + index) }
    print("\(appends) tasks at once, each appending its own item, \(added[0]) to \(added[appends - 1]):")
    print("  try await store.update { items in items.map { $0 + [item] } }")
    let failures = await withTaskGroup(of: Bool.self) { group in
        for item in added {
            group.addTask {
                do {
                    try await store.update { items in items.map { items in items + [item] } }
                    return false
                } catch {
                    return true
                }
            }
        }
        return await group.reduce(0) { count, failed in failed ? count + 1 : count }
    }
    let items = await cache.record(key: key)?.data ?? []
    let appended = Array(items.dropFirst(pageSize))
    let kept = Set(appended.map(\.number)).intersection(added.map(\.number)).count
    let verdict = kept == appends ? "all \(appends) appends" : "only \(kept) of the \(appends) appends"
    print("→ \(items.count) items: the \(pageSize) of page 0, then \(verdict)")
    print("  (in the order the write turns were granted; \(failures) update(_:) calls threw)")
    checks.expect(failures == 0, "no update(_:) should throw, but \(failures) did")
    checks.expect(Array(items.prefix(pageSize)) == page0, "the appends should follow page 0")
    checks.expect(
        kept == appends && appended.count == appends,
        "all \(appends) appends should be kept exactly once, not \(kept) of \(appended.count)")

    print("try await store.nextPageState().cursor   // update { } keeps the cursors")
    let cursor: Int?
    do {
        cursor = try await store.nextPageState().cursor
    } catch {
        checks.expect(false, "nextPageState() should read the cache, not throw \(error)")
        return
    }
    print("→ \(describe(cursor))")
    checks.expect(cursor == 1, "update(_:) should keep next cursor 1, not \(describe(cursor))")

    print("await store.requestNextData()   // page 1 goes on after the edited list")
    let result = await store.requestNextData()
    let paged = await cache.record(key: key)?.data ?? []
    print("→ \(String(describing: result))   \(paged.count) items, the last: \(describe(paged.last))")
    checks.expect(result.isLoaded, "page 1 should return .loaded, not \(String(describing: result))")
    checks.expect(
        paged.count == pageSize + appends + pageSize && paged.last == ListItem(number: 2 * pageSize),
        "page 1 should be appended after the \(appends) edits")
}
