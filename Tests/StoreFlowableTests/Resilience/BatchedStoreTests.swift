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

    /// "`update()` wins" through the batcher: a batch that read the origin before a write answers after
    /// it. The update supersedes key 1's fetch; a refresh started after the update must not join that
    /// batch (whose other key keeps it running) and write its older value over the update's.
    @Test func aFetchAfterAnUpdateNeverTakesTheAnswerOfABatchSentBeforeIt() async throws {
        let clock = ManualClock()
        let cacheClock = ManualCacheClock()
        let gate = Gate()
        let version = LockedValue(1)
        let calls = LockedValue<[[Int]]>([])
        let batch = BatchedOrigin<Int, Int>(window: .milliseconds(10), maxBatchSize: 100, clock: clock) { keys in
            // The origin is read when the call begins; the first call then answers late.
            let read = version.withLock { $0 }
            let number = calls.withLock { calls in
                calls.append(keys)
                return calls.count
            }
            if number == 1 { await gate.wait() }
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, .success(read)) })
        }
        let cache = MemoryCache<Int, Int>(
            policy: FreshnessPolicy(freshFor: .seconds(5), staleWhileRevalidate: .seconds(60)), clock: cacheClock)
        let store = KeyedStore(cache: cache) { key in try await batch.load(key) }
        func sendPendingBatch() async {
            while batch.pendingKeyCount > 0 && !Task.isCancelled {
                clock.advance(by: .milliseconds(10))
                await Task.yield()
            }
        }

        // Keys 1 and 2 miss: one batch asks for both and reads version 1, then waits.
        let first = Task { try await store[1].requireData() }
        let second = Task { try await store[2].requireData() }
        while batch.pendingKeyCount < 2 && !Task.isCancelled { await Task.yield() }
        await sendPendingBatch()
        await gate.arrived()
        // The origin now holds version 2, and the store is updated with it.
        version.withLock { $0 = 2 }
        await store[1].update(newData: 2)
        #expect(try await first.value == 2, "the superseded fetch's caller gets the update")
        // Once stale, a read serves version 2 and starts a refresh: it goes to a batch of its own.
        cacheClock.advance(by: .seconds(10))
        #expect(try await store[1].requireData() == 2)
        while batch.pendingKeyCount < 1 && !Task.isCancelled { await Task.yield() }
        await sendPendingBatch()
        // The first batch answers with what it read before the write.
        gate.open()
        #expect(try await second.value == 1)
        while !(await store.manager.isIdle(1, Int.self)) && !Task.isCancelled { await Task.yield() }
        #expect(cache.entry(forKey: 1)?.value == 2)
        #expect(calls.withLock { $0 }.map(Set.init) == [[1, 2], [1]])
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
