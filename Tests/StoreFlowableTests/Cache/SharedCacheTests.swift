import StoreFlowable
import StoreFlowableTesting
import Testing

/// Each test has a marker type of its own, so that no other test touches its cache first.
private enum SharedUsers: SharedCache {
    static let shared = TestKeyedCache<Int, String>()
}

private enum ForwardedUsers: SharedCache {
    static let shared = TestKeyedCache<Int, String>([7: CacheEntry(value: "seven", storedAt: .distantPast)])
}

/// A shared cache whose initialiser counts its runs.
private enum CountedUsers: SharedCache {
    static let initialisations = LockedValue(0)
    static let shared: TestKeyedCache<Int, String> = {
        initialisations.withLock { $0 += 1 }
        return TestKeyedCache()
    }()
}

/// The shared cache of `Marker`, reached through the protocol as generic code would.
private func sharedCache<Marker: SharedCache>(of marker: Marker.Type) -> Marker.Cache {
    marker.shared
}

@Suite struct SharedCacheTests {
    @Test(.timeLimit(.minutes(1)))
    func twoUsesSeeOneInstance() async throws {
        let first = SharedUsers.shared
        let second = sharedCache(of: SharedUsers.self)
        #expect(first === second)
        let entry = CacheEntry(value: "one", storedAt: .distantPast)
        try await first.setEntry(entry, forKey: 1)
        #expect(try await second.entry(forKey: 1) == entry)
        #expect(try await SharedUsers.entry(forKey: 1) == entry)
    }

    @Test(.timeLimit(.minutes(1)))
    func concurrentFirstAccessInitialisesOnce() async {
        let identities = await withTaskGroup(of: ObjectIdentifier.self) { group in
            for task in 0..<200 {
                group.addTask {
                    // Some tasks reach the cache from the main actor, the others from the global executor.
                    if task.isMultiple(of: 4) {
                        return await MainActor.run { ObjectIdentifier(CountedUsers.shared) }
                    }
                    return ObjectIdentifier(CountedUsers.shared)
                }
            }
            var identities = Set<ObjectIdentifier>()
            for await identity in group { identities.insert(identity) }
            return identities
        }
        #expect(identities.count == 1)
        #expect(CountedUsers.initialisations.withLock { $0 } == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func theConveniencesForwardToTheSharedCache() async throws {
        let cache = ForwardedUsers.shared
        let entry = CacheEntry(value: "one", storedAt: .distantPast)
        try await ForwardedUsers.setEntry(entry, forKey: 1)
        try await ForwardedUsers.setEntry(entry, forKey: 2)
        #expect(try await ForwardedUsers.entry(forKey: 1) == entry)
        try await ForwardedUsers.invalidateEntry(forKey: 1)
        #expect(cache[1] == entry.invalidated)
        try await ForwardedUsers.invalidateEntries { $0 == 2 }
        #expect(cache[2] == entry.invalidated)
        try await ForwardedUsers.removeEntry(forKey: 1)
        #expect(cache[1] == nil)
        #expect(cache[7] != nil)
        try await ForwardedUsers.removeAllEntries()
        #expect(cache.entries.isEmpty)
        #expect(
            cache.operations == [
                .write(1, entry), .write(2, entry), .read(1), .invalidate(1), .invalidateMatching([2]), .remove(1),
                .removeAll,
            ])
    }
}
