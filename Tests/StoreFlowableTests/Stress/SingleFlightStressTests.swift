import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Promise 1 under load: however many callers and whatever mix of calls, one fetch per key at a time.
@Suite(.timeLimit(.minutes(3)))
struct SingleFlightStressTests {
    static let callers = 10_000

    /// The kinds of call that need the origin when the cache is empty.
    enum CallKind: String, CaseIterable, Sendable {
        case requireOrigin, requireBoth, getData, validate, refresh, publish
    }

    /// Runs one call of `kind` and returns the value it observed (validate/refresh read the cache after).
    static func run(_ kind: CallKind, on store: AnyStoreFlowable<String>) async throws -> String? {
        switch kind {
        case .requireOrigin: return try await store.requireData(from: .origin)
        case .requireBoth: return try await store.requireData(from: .both)
        case .getData: return await store.getData()
        case .validate:
            await store.validate()
            return await store.getData(from: .cache)
        case .refresh:
            await store.refresh()
            return await store.getData(from: .cache)
        case .publish:
            for await state in store.publish() where state.isCompleted { return state.content }
            return nil
        }
    }

    @Test func tenThousandConcurrentOriginReadsShareOneFetch() async throws {
        let fixture = StoreFixture(origin: [.success("fresh")], otherwise: nil)
        fixture.origin.hold()
        let store = fixture.store
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<Self.callers {
                group.addTask { try await store.requireData(from: .origin) }
            }
            await eventually { await fixture.registry().waiters == Self.callers }
            fixture.origin.release()
            var values = 0
            for try await value in group {
                #expect(value == "fresh")
                values += 1
            }
            #expect(values == Self.callers)
        }
        #expect(fixture.origin.callCount == 1)
        #expect(fixture.origin.maxConcurrentCalls == 1)
        #expect(await fixture.manager.trackedKeyCount == 0)
    }

    @Test(arguments: CallKind.allCases)
    func tenThousandConcurrentCallsOfOneKindShareOneFetch(kind: CallKind) async throws {
        let fixture = StoreFixture(origin: [.success("fresh")], otherwise: nil)
        fixture.origin.hold()
        let store = fixture.store
        try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<Self.callers {
                group.addTask { try await Self.run(kind, on: store) }
            }
            await eventually {
                let (subscribers, waiters) = await fixture.registry()
                return subscribers + waiters == Self.callers
            }
            fixture.origin.release()
            var values = 0
            for try await value in group where value == "fresh" { values += 1 }
            #expect(values == Self.callers)
        }
        #expect(fixture.origin.callCount == 1)
        await fixture.waitUntilReleased()
    }

    @Test func mixedCallsOnOneKeyNeverOverlapFetches() async throws {
        let fixture = StoreFixture()
        let store = fixture.store
        try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<Self.callers {
                let kind = CallKind.allCases[index % CallKind.allCases.count]
                group.addTask { try await Self.run(kind, on: store) }
            }
            var values = 0
            for try await value in group where value != nil { values += 1 }
            #expect(values == Self.callers)
        }
        #expect(fixture.origin.maxConcurrentCalls == 1)
        #expect(fixture.origin.callCount >= 1)
        await fixture.waitUntilReleased()
    }

    @Test func tenThousandKeysEachFetchOnceForManyCallers() async throws {
        let manager = FlowableDataStateManager<Int>()
        let origin = ScriptedOrigin<String>(otherwise: { .success("fresh-\($0)") })
        origin.hold()
        let stores = (0..<Self.callers).map { key in
            TestStoreCallback(key: key, manager: manager, cache: InMemoryCache<String>(), origin: origin).create()
        }
        try await withThrowingTaskGroup(of: String.self) { group in
            for store in stores {
                group.addTask { try await store.requireData(from: .origin) }
                group.addTask { try await store.requireData(from: .both) }
            }
            await origin.waitForCalls(Self.callers)
            origin.release()
            var values = 0
            for try await _ in group { values += 1 }
            #expect(values == 2 * Self.callers)
        }
        // Two callers per key, one fetch per key: the second caller always joined the first's fetch
        // because the origin was held until every key had started one.
        #expect(origin.callCount == Self.callers)
        #expect(await manager.trackedKeyCount == 0)
    }

    @Test func cancellingHalfOfTenThousandCallersLeavesTheFetchToTheOtherHalf() async throws {
        let fixture = StoreFixture(origin: [.success("fresh")], otherwise: nil)
        fixture.origin.hold()
        let store = fixture.store
        let callers = (0..<Self.callers).map { _ in Task { try await store.requireData(from: .origin) } }
        await eventually { await fixture.registry().waiters == Self.callers }
        for (index, caller) in callers.enumerated() where index % 2 == 0 { caller.cancel() }
        var cancelled = 0
        for (index, caller) in callers.enumerated() where index % 2 == 0 {
            do {
                _ = try await caller.value
            } catch is CancellationError {
                cancelled += 1
            }
        }
        // Every cancelled caller was answered while the origin was still held.
        #expect(cancelled == Self.callers / 2)
        #expect(await fixture.registry().waiters == Self.callers / 2)
        fixture.origin.release()
        for (index, caller) in callers.enumerated() where index % 2 == 1 {
            #expect(try await caller.value == "fresh")
        }
        #expect(fixture.origin.callCount == 1)
        #expect(fixture.origin.cancelledCount == 0)
        await fixture.waitUntilReleased()
    }
}
