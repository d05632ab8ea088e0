import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promise 9: the state manager keeps nothing for idle keys, and registries empty when callers leave.
/// (Resident-memory figures are measured in the Benchmarks package, not here.)
@Suite(.timeLimit(.minutes(2)))
struct MemoryTests {
    @Test func tenThousandKeysThatWentIdleAreAllReleased() async throws {
        let manager = FlowableDataStateManager<String>()
        let origin = ScriptedOrigin<String>(otherwise: { .success("fresh-\($0)") })
        await withTaskGroup(of: String?.self) { group in
            for index in 0..<10_000 {
                let callback = TestStoreCallback(
                    key: "key-\(index)", manager: manager, cache: InMemoryCache<String>(), origin: origin)
                group.addTask { await callback.create().getData() }
            }
            var values = 0
            for await value in group where value != nil { values += 1 }
            #expect(values == 10_000)
        }
        #expect(origin.callCount == 10_000)
        #expect(await manager.trackedKeyCount == 0)
    }

    @Test func cacheHitsNeverCreateKeyState() async throws {
        let fixture = StoreFixture(cached: "valid")
        let store = fixture.store
        for _ in 0..<100_000 {
            _ = await store.getData()
        }
        #expect(await fixture.manager.trackedKeyCount == 0)
        #expect(fixture.cache.readCount == 100_000)
    }

    @Test func registriesAreEmptyAfterStreamsAndCallersEnd() async throws {
        let fixture = StoreFixture(origin: [.success("fresh")])
        fixture.origin.hold()
        let recorders = (0..<50).map { _ in StateRecorder(fixture.store.publish()) }
        let store = fixture.store
        let callers = (0..<50).map { _ in Task { try await store.requireData() } }
        await eventually { await fixture.registry() == (50, 50) }
        fixture.origin.release()
        for caller in callers { #expect(try await caller.value == "fresh") }
        #expect(await fixture.registry().waiters == 0)
        for recorder in recorders {
            try await recorder.waitForLatest { $0.isCompleted }
            recorder.cancel()
        }
        await fixture.waitUntilReleased()
        #expect(await fixture.registry() == (0, 0))
    }

    @Test func aRememberedErrorIsTheOnlyStateKeptForAnIdleKey() async throws {
        let fixture = StoreFixture(cached: "valid", origin: [.failure(TestError("offline"))])
        await fixture.store.refresh()
        #expect(await fixture.manager.trackedKeyCount == 1)
        #expect(await fixture.registry() == (0, 0))
        await fixture.manager.resetError(for: "key", of: String.self)
        #expect(await fixture.manager.trackedKeyCount == 0)
    }

    @Test func failuresForEverNewKeysStayWithinTheRememberedErrorLimit() async throws {
        let manager = FlowableDataStateManager<Int>(rememberedErrorLimit: 10)
        let origin = ScriptedOrigin<String>(otherwise: { _ in .failure(TestError("not found")) })
        for key in 0..<100 {
            let store = TestStoreCallback(key: key, manager: manager, cache: InMemoryCache<String>(), origin: origin)
                .create()
            #expect(await store.getData() == nil)
        }
        #expect(await manager.trackedKeyCount == 10)
        #expect(await manager.dataState(for: 99, of: String.self).rawError != nil)
        #expect(await manager.dataState(for: 89, of: String.self).rawError == nil)
    }
}
