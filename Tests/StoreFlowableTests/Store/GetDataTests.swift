import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// `getData`/`requireData` from each source, `validate` and `refresh` (promises 4 and 10).
@Suite(.timeLimit(.minutes(1)))
struct GetDataTests {
    @Test func validCacheIsServedWithoutTheOriginOrTheStateManager() async throws {
        let fixture = StoreFixture(cached: "valid")
        #expect(try await fixture.store.requireData() == "valid")
        #expect(await fixture.store.getData() == "valid")
        #expect(try await fixture.store.requireData(from: .cache) == "valid")
        #expect(fixture.origin.callCount == 0)
        #expect(await fixture.manager.trackedKeyCount == 0)
    }

    @Test(arguments: [nil, "stale"] as [String?])
    func bothFetchesWhenTheCacheIsMissingOrStale(cached: String?) async throws {
        let fixture = StoreFixture(cached: cached, origin: [.success("fresh")])
        #expect(try await fixture.store.requireData(from: .both) == "fresh")
        #expect(fixture.cache.value == "fresh")
        #expect(fixture.origin.callCount == 1)
    }

    @Test(arguments: [nil, "stale", "valid"] as [String?])
    func originAlwaysFetches(cached: String?) async throws {
        let fixture = StoreFixture(cached: cached, origin: [.success("fresh")])
        #expect(try await fixture.store.requireData(from: .origin) == "fresh")
        #expect(fixture.origin.callCount == 1)
        #expect(fixture.cache.writes == ["fresh"])
    }

    @Test(arguments: [nil, "stale"] as [String?])
    func cacheOnlyThrowsNoValidCacheWithoutContactingTheOrigin(cached: String?) async throws {
        let fixture = StoreFixture(cached: cached)
        await #expect(throws: StoreFlowableError.self) { try await fixture.store.requireData(from: .cache) }
        do {
            _ = try await fixture.store.requireData(from: .cache)
        } catch StoreFlowableError.noValidCache {
            // Expected.
        }
        #expect(await fixture.store.getData(from: .cache) == nil)
        #expect(fixture.origin.callCount == 0)
    }

    @Test func failedFetchRethrowsTheOriginErrorAndKeepsTheCache() async throws {
        let fixture = StoreFixture(cached: "stale", origin: [.failure(TestError("offline"))])
        await #expect(throws: TestError("offline")) { try await fixture.store.requireData() }
        #expect(fixture.cache.value == "stale")
        #expect(await fixture.store.dataState().rawError as? TestError == TestError("offline"))
    }

    @Test func getDataReturnsNilOnlyWhenThereIsNoValidCache() async throws {
        let fixture = StoreFixture(
            cached: "stale", origin: [.failure(TestError("offline"))], otherwise: { _ in .failure(TestError("down")) })
        #expect(await fixture.store.getData() == nil)
        await fixture.store.update(newData: "valid")
        await fixture.store.refresh()  // fails, leaving an error state with a valid cache
        #expect(await fixture.store.dataState().rawError != nil)
        let calls = fixture.origin.callCount
        #expect(await fixture.store.getData() == "valid")
        #expect(fixture.origin.callCount == calls)
    }

    @Test func validateFetchesOnlyWhenTheCacheIsMissingOrStale() async throws {
        let valid = StoreFixture(cached: "valid")
        await valid.store.validate()
        #expect(valid.origin.callCount == 0)

        let stale = StoreFixture(cached: "stale", origin: [.success("fresh")])
        await stale.store.validate()
        #expect(stale.origin.callCount == 1)
        #expect(stale.cache.value == "fresh")
    }

    @Test func refreshFetchesWhateverTheCacheHolds() async throws {
        let fixture = StoreFixture(cached: "valid", origin: [.success("fresh")])
        await fixture.store.refresh()
        #expect(fixture.origin.callCount == 1)
        #expect(fixture.cache.value == "fresh")
        #expect(await fixture.store.dataState().isLoading == false)
    }

    @Test func aSecondCallerJoinsTheFetchInFlight() async throws {
        let fixture = StoreFixture(origin: [.success("fresh")])
        fixture.origin.hold()
        let store = fixture.store
        async let first = store.requireData(from: .origin)
        async let second = store.requireData(from: .both)
        await eventually { await fixture.registry().waiters == 2 }
        fixture.origin.release()
        #expect(try await first == "fresh")
        #expect(try await second == "fresh")
        #expect(fixture.origin.callCount == 1)
    }
}
