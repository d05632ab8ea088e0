import StoreFlowable
import StoreFlowablePostgres
import Testing

// The example of Docs/ServerCaches.md, section 7, "Changes across instances", compiled and run here
// (the guide shows this file).

/// Hands `refresh` what other instances change in `users`, until the task is cancelled: a key, or
/// `nil` for "any key" (a long key's hash, every key removed, or a new connection: the listener may
/// have missed changes).
func followChanges(
    of users: PostgresCache<Int, String>, refresh: @escaping @Sendable (Int?) async -> Void
) async {
    await users.listenForChanges { change in
        switch change {
        case .key(let id, version: _): await refresh(id)
        case .keyHash, .all: await refresh(nil)
        }
    }
}

@Test(.timeLimit(.minutes(1)))
func theGuidesListenerHearsAnotherInstancesWrite() async throws {
    try await withClient { client in
        let name = uniqueName()
        let here = try await makeCache(client, name: name)
        let there = try await makeCache(client, name: name)  // another instance's cache object
        let refreshed = Recorder<Int?>()
        let listening = Task { await followChanges(of: here) { refreshed.record($0) } }
        try await refreshed.wait(forCount: 1)  // `nil`: it listens
        try await there.setEntry(CacheEntry(value: "Ada", storedAt: there.clock.now), forKey: 42)
        #expect(try await refreshed.wait(forCount: 2) == [nil, 42])
        listening.cancel()
        await listening.value
    }
}
