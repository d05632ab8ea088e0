import Foundation
import StoreFlowable
import StoreFlowableFoundation

/// The disk part: user 1 is kept in a `DiskCache` in the system's temporary directory, so that the next
/// run of the demo, another process, finds it there and needs no origin call.
///
/// The first run (or one more than ``freshFor`` after the last) finds nothing usable on disk, fetches
/// the user and saves it; a run within ``freshFor`` of it reads the saved user and does not call the
/// origin at all.
func showDisk(_ checks: inout Checks) async {
    let freshFor = Duration.seconds(600)
    let started = SystemCacheClock().now
    let cache: DiskCache<Int, User>
    do {
        cache = try DiskCache(
            name: "users",
            directory: FileManager.default.temporaryDirectory.appending(path: "storeflowable-demo"),
            policy: FreshnessPolicy(freshFor: freshFor),
            events: { event in print("  disk cache: \(event)") })
    } catch {
        checks.expect(false, "the disk cache should open, not throw \(error)")
        return
    }
    let origin = DemoOrigin()
    let users = DemoRepository.users(cache: cache, origin: origin)

    print("let users = KeyedStore(cache: DiskCache<Int, User>(name: \"users\", …)) { … }")
    print("folder: \(cache.folder.path(percentEncoded: false).trimmingSuffix("/"))")
    print("policy: fresh for \(minutes(freshFor)); the folder outlives the process")

    // What an earlier run left, read straight from the cache (an expired entry is deleted here).
    let found: CacheEntry<User>?
    do {
        found = try await cache.entry(forKey: 1)
    } catch {
        checks.expect(false, "reading the disk cache should not throw \(error)")
        return
    }
    // Fresh unless the wall clock went back since it was saved (an entry from the future is stale).
    let isFresh = found.map { entry in cache.freshness(of: entry) == .fresh } ?? false
    if let found {
        let age = found.storedAt.duration(to: started)
        let when = age >= .zero ? "\(seconds(age)) ago, by an earlier run" : "in the future: stale"
        print("on disk: \(found.value), saved \(when)")
    } else {
        print("on disk: nothing (the first run, or the last was \(minutes(freshFor)) ago or more)")
    }

    let clock = ContinuousClock()
    let start = clock.now
    let user: User
    do {
        user = try await users[1].requireData()
    } catch {
        checks.expect(false, "requireData() should return user 1, not throw \(error)")
        return
    }
    let elapsed = start.duration(to: clock.now)
    let calls = await origin.callCount
    print("try await users[1].requireData() -> \(user)  in \(milliseconds(elapsed))")

    if let found, isFresh {
        print("→ this run found the previous run's value: served from disk, no fetch")
        print("  (origin calls: \(calls)): a cache hit across processes")
        checks.expect(calls == 0, "a fresh value saved by an earlier run should need no fetch, not \(calls)")
        checks.expect(user == found.value, "the value on disk, \(found.value), should be served")
    } else {
        let saved = try? await cache.entry(forKey: 1)
        print("→ no previous value: fetched (origin calls: \(calls)) and saved to disk,")
        print("  \(entryFiles(in: cache.folder))")
        print("  run the demo again within \(minutes(freshFor)): it reads this file, no fetch")
        checks.expect(calls == 1, "a miss should cause one fetch, not \(calls)")
        checks.expect(saved?.value == user, "the fetched user should be saved on disk")
    }
}

/// The entry files in `folder` with their sizes, like `1 file: 5c1e0a3f6b2d9e47.entry (97 bytes)`.
private func entryFiles(in folder: URL) -> String {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false))) ?? []
    let files = names.filter { name in name.hasSuffix(".entry") }.sorted().map { name in
        let path = folder.appending(path: name).path(percentEncoded: false)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        return "\(name) (\(size.map { size in "\(size) bytes" } ?? "size unknown"))"
    }
    return "\(files.count) file\(files.count == 1 ? "" : "s"): " + files.joined(separator: ", ")
}

extension String {
    /// The string without the trailing `suffix`s: `/tmp/users/` gives `/tmp/users` for `/`.
    fileprivate func trimmingSuffix(_ suffix: Character) -> String {
        var trimmed = self
        while trimmed.count > 1, trimmed.last == suffix { trimmed.removeLast() }
        return trimmed
    }
}

/// A duration in whole minutes: `10 min`.
private func minutes(_ duration: Duration) -> String {
    "\(duration.components.seconds / 60) min"
}

/// A duration in seconds with one decimal: `8.2 s`.
private func seconds(_ duration: Duration) -> String {
    let tenths = duration.components.seconds * 10 + duration.components.attoseconds / 100_000_000_000_000_000
    return "\(tenths / 10).\(abs(tenths % 10)) s"
}
