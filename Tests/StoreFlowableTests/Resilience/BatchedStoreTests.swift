import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// A `BatchedOrigin` under `KeyedStore`s: the store's single flight, freshness, cancellation and
/// per-key states, with the batcher merging the misses of different keys.
@Suite("Batching through the store", .timeLimit(.minutes(1)))
struct BatchedStoreTests {
    private struct Missing: Error {}

    private struct Fixture: Sendable {
        let clock = ManualClock()
        let events = StoreEventRecorder()
        let calls = LockedValue<[[Int]]>([])
        let gate: Gate?
        let batch: BatchedOrigin<Int, String>
        let store: KeyedStore<MemoryCache<Int, String>>

        init(maxBatchSize: Int = 100, gate: Gate? = nil, failing: Set<Int> = [], missing: Set<Int> = []) {
            let calls = calls
            self.gate = gate
            batch = BatchedOrigin(
                window: .milliseconds(10), maxBatchSize: maxBatchSize, clock: clock, observer: events
            ) { keys in
                calls.withLock { $0.append(keys) }
                await gate?.wait()
                var results: [Int: Result<String, any Error>] = [:]
                for key in keys where !missing.contains(key) {
                    results[key] = failing.contains(key) ? .failure(Missing()) : .success("user \(key)")
                }
                return results
            }
            let batch = batch
            store = KeyedStore(
                cache: MemoryCache(policy: FreshnessPolicy(freshFor: .seconds(60))),
                manager: FlowableDataStateManager(observer: events)
            ) { key in try await batch.load(key) }
        }

        /// Moves the clock past the window until the pending batch went out. (Advancing once could come
        /// before the batch's window task went to sleep, which would then sleep past the new time.)
        func sendPendingBatch() async {
            while batch.pendingKeyCount > 0 && !Task.isCancelled {
                clock.advance(by: .milliseconds(10))
                await Task.yield()
            }
        }

        /// Yields until `condition` holds (or the test is cancelled by its time limit).
        func waitUntil(_ condition: @Sendable () -> Bool) async {
            while !condition() && !Task.isCancelled { await Task.yield() }
        }
    }

    @Test func aThousandLoadsOfAHundredKeysAreOneOriginCall() async throws {
        // A batch larger than the keys: the window, not the size, sends it.
        let fixture = Fixture(maxBatchSize: 1_000)
        let store = fixture.store
        let loads = (0..<1_000).map { index in Task { try await store[index % 100].requireData() } }
        await fixture.waitUntil { fixture.batch.pendingKeyCount == 100 }
        await fixture.sendPendingBatch()
        for (index, load) in loads.enumerated() { #expect(try await load.value == "user \(index % 100)") }
        let calls = fixture.calls.withLock { $0 }
        #expect(calls.count == 1)
        #expect(calls.first?.count == 100)
        #expect(Set(calls.first ?? []) == Set(0..<100))
        let summary = fixture.events.events.map { RetryFixture.summary(of: $0.kind) }
        #expect(summary.filter { $0.hasPrefix("batch") } == ["batch 100"])
        #expect(summary.filter { $0 == "started 1" }.count == 100)
    }

    @Test func theMaximumBatchSizeSplitsTheKeys() async throws {
        let fixture = Fixture(maxBatchSize: 30)
        let store = fixture.store
        let loads = (0..<100).map { key in Task { try await store[key].requireData() } }
        await fixture.waitUntil { fixture.calls.withLock { $0.count } == 3 && fixture.batch.pendingKeyCount == 10 }
        await fixture.sendPendingBatch()
        for (key, load) in loads.enumerated() { #expect(try await load.value == "user \(key)") }
        let calls = fixture.calls.withLock { $0 }
        #expect(calls.map(\.count) == [30, 30, 30, 10])
        #expect(Set(calls.joined()).count == 100)
    }

    @Test func freshKeysAreNeverSent() async throws {
        let fixture = Fixture()
        for key in 0..<50 { fixture.store.cache.setValue("cached \(key)", forKey: key) }
        let store = fixture.store
        let loads = (0..<100).map { key in Task { try await store[key].requireData() } }
        await fixture.waitUntil { fixture.batch.pendingKeyCount == 50 }
        await fixture.sendPendingBatch()
        for (key, load) in loads.enumerated() {
            #expect(try await load.value == (key < 50 ? "cached \(key)" : "user \(key)"))
        }
        #expect(fixture.calls.withLock { $0 }.map(Set.init) == [Set(50..<100)])
    }

    @Test func aKeyAlreadyInFlightIsNotBatchedAgain() async throws {
        let gate = Gate()
        let fixture = Fixture(gate: gate)
        let store = fixture.store
        let first = Task { try await store[1].requireData() }
        await fixture.waitUntil { fixture.batch.pendingKeyCount == 1 }
        await fixture.sendPendingBatch()
        await gate.arrived()
        let again = Task { try await store[1].requireData() }
        let other = Task { try await store[2].requireData() }
        await fixture.waitUntil { fixture.batch.pendingKeyCount == 1 }
        await fixture.sendPendingBatch()
        gate.open()
        #expect(try await first.value == "user 1")
        #expect(try await again.value == "user 1")
        #expect(try await other.value == "user 2")
        #expect(fixture.calls.withLock { $0 } == [[1], [2]])
    }

    @Test func keysWhoseCallersLeftBeforeDispatchAreNotSent() async throws {
        let fixture = Fixture()
        let store = fixture.store
        let loads = (0..<10).map { key in Task { try await store[key].requireData() } }
        await fixture.waitUntil { fixture.batch.pendingKeyCount == 10 }
        for load in loads[0..<5] { load.cancel() }
        await fixture.waitUntil { fixture.batch.pendingKeyCount == 5 }
        await fixture.sendPendingBatch()
        for load in loads[0..<5] { await #expect(throws: CancellationError.self) { try await load.value } }
        for (key, load) in loads.enumerated().dropFirst(5) { #expect(try await load.value == "user \(key)") }
        #expect(fixture.calls.withLock { $0 }.map(Set.init) == [Set(5..<10)])
    }

    @Test func errorsAndMissingKeysAreEachKeysOwn() async throws {
        let fixture = Fixture(failing: [3], missing: [4])
        let store = fixture.store
        let loads = (0..<6).map { key in Task { try await store[key].requireData() } }
        await fixture.waitUntil { fixture.batch.pendingKeyCount == 6 }
        await fixture.sendPendingBatch()
        for (key, load) in loads.enumerated() {
            switch key {
            case 3: await #expect(throws: Missing.self) { try await load.value }
            case 4: await #expect(throws: BatchedOriginError.self) { try await load.value }
            default: #expect(try await load.value == "user \(key)")
            }
        }
        if case .error = await fixture.store.manager.dataState(for: 3, of: String.self) {
        } else {
            Issue.record("the failed key's state is not .error")
        }
        if case .fixed = await fixture.store.manager.dataState(for: 5, of: String.self) {
        } else {
            Issue.record("a served key's state is not .fixed")
        }
        // The failure is not remembered by the batcher: the next load asks the origin again.
        let retry = Task { try await store[3].requireData() }
        await fixture.waitUntil { fixture.batch.pendingKeyCount == 1 }
        await fixture.sendPendingBatch()
        await #expect(throws: Missing.self) { try await retry.value }
        #expect(fixture.calls.withLock { $0 }.count == 2)
    }
}
