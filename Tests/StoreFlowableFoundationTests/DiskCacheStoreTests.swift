import Foundation
import StoreFlowable
import StoreFlowableFoundation
import StoreFlowableTesting
import Testing

/// Stores built on a `DiskCache`: a value cached by one process's store is a cache hit for the next, and
/// a disk that cannot be written gives a typed error while the store keeps serving from memory or the
/// origin.
@Suite(.timeLimit(.minutes(1)))
struct DiskCacheStoreTests {
    @Test func aRestartedStoreServesTheValueTheLastOneCachedWithoutFetching() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let policy = FreshnessPolicy(freshFor: .seconds(60))
            let origin = ScriptedOrigin<String>(otherwise: { .success("fetched-\($0)") })
            let first = KeyedStore(cache: try makeCache(folder, policy: policy, clock: clock, as: (Int, String).self)) {
                _ in try await origin.fetch()
            }
            #expect(try await first[42].requireData() == "fetched-1")
            // A new cache instance and store over the same folder: what a second process sees.
            let second = KeyedStore(cache: try makeCache(folder, policy: policy, clock: clock, as: (Int, String).self))
            {
                _ in try await origin.fetch()
            }
            #expect(try await second[42].requireData() == "fetched-1")
            #expect(origin.callCount == 1)
            // The value's age survived the restart: past freshFor it is fetched again.
            clock.advance(by: .seconds(60))
            #expect(try await second[42].requireData() == "fetched-2")
        }
    }

    @Test func anInvalidationThroughTheStoreSurvivesARestart() async throws {
        try await withTemporaryFolder { folder in
            let clock = ManualCacheClock()
            let origin = ScriptedOrigin<String>(otherwise: { .success("fetched-\($0)") })
            let first = KeyedStore(cache: try makeCache(folder, clock: clock, as: (Int, String).self)) { _ in
                try await origin.fetch()
            }
            _ = try await first[1].requireData()
            try await first.invalidateAll()
            let second = KeyedStore(cache: try makeCache(folder, clock: clock, as: (Int, String).self)) { _ in
                try await origin.fetch()
            }
            #expect(try await second[1].requireData() == "fetched-2")
        }
    }

    @Test func anUnwritableDiskGivesATypedErrorAndTheStoreKeepsServingFromTheOrigin() async throws {
        try await withTemporaryFolder { folder in
            // The cache's parent is a regular file: its folder cannot be created, even by root.
            let file = folder.appending(path: "a-file")
            try Data("not a folder".utf8).write(to: file)
            let origin = ScriptedOrigin<String>(otherwise: { .success("fetched-\($0)") })
            let users = KeyedStore(cache: try makeCache(file, clock: ManualCacheClock(), as: (Int, String).self)) {
                _ in try await origin.fetch()
            }
            for call in 1...2 {
                await #expect {
                    try await users[7].requireData()
                } throws: { error in
                    guard case .cacheWriteFailed(let underlying) = error as? StoreFlowableError else { return false }
                    return underlying is DiskCacheError
                }
                #expect(origin.callCount == call)
            }
            #expect(await users.manager.trackedKeyCount <= 1)  // at most the remembered error
        }
    }

    @Test func behindAMemoryTierAnUnwritableDiskIsReportedAndTheStoreServesFromMemory() async throws {
        try await withTemporaryFolder { folder in
            let file = folder.appending(path: "a-file")
            try Data("not a folder".utf8).write(to: file)
            let clock = ManualCacheClock()
            let failures = LockedErrors()
            let tiers = TieredCache(
                front: MemoryCache<Int, String>(clock: clock),
                back: try makeCache(file, clock: clock, as: (Int, String).self),
                onBackWriteFailure: { failures.append($0) })
            let origin = ScriptedOrigin<String>(otherwise: { .success("fetched-\($0)") })
            let users = KeyedStore(cache: tiers) { _ in try await origin.fetch() }
            #expect(try await users[7].requireData() == "fetched-1")
            #expect(try await users[7].requireData() == "fetched-1")
            #expect(origin.callCount == 1)
            #expect(failures.count == 1)
            #expect(failures.first is DiskCacheError)
        }
    }
}

/// Errors collected from any thread.
final class LockedErrors: Sendable {
    private let errors = LockedValue<[any Error]>([])
    func append(_ error: any Error) { errors.withLock { $0.append(error) } }
    var count: Int { errors.withLock { $0.count } }
    var first: (any Error)? { errors.withLock { $0.first } }
}
