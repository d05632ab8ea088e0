import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// A `ConcurrencyLimit` shared by the stores of one origin: at most N origin calls at once, across keys
/// and managers, and queued fetches whose callers left never reach the origin.
@Suite("Concurrency limit through the store", .timeLimit(.minutes(1)))
struct ConcurrencyLimitStoreTests {
    /// An origin that counts calls running at once and holds each at a gate until the test opens it.
    private final class CountingOrigin: Sendable {
        private struct Counts {
            var running = 0
            var maxRunning = 0
            var started: [Int] = []
        }

        private let counts = LockedValue(Counts())
        let gate = Gate()

        func fetch(_ key: Int) async -> String {
            counts.withLock {
                $0.running += 1
                $0.maxRunning = max($0.maxRunning, $0.running)
                $0.started.append(key)
            }
            await gate.wait()
            counts.withLock { $0.running -= 1 }
            return "value \(key)"
        }

        var maxRunning: Int { counts.withLock { $0.maxRunning } }
        var started: [Int] { counts.withLock { $0.started } }
        var running: Int { counts.withLock { $0.running } }
    }

    private static func store(_ origin: CountingOrigin, limit: ConcurrencyLimit) -> KeyedStore<MemoryCache<Int, String>>
    {
        KeyedStore(
            cache: MemoryCache(),
            manager: FlowableDataStateManager(fetchPolicy: FetchPolicy(concurrencyLimit: limit))
        ) { key in await origin.fetch(key) }
    }

    private static func waitUntil(_ condition: @Sendable () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    @Test func aThousandDistinctKeysNeverRunMoreThanTheLimit() async throws {
        let origin = CountingOrigin()
        let limit = ConcurrencyLimit(maxConcurrent: 8)
        // Two managers (two kinds of data of one origin) share the limit.
        let stores = [Self.store(origin, limit: limit), Self.store(origin, limit: limit)]
        let loads = (0..<1_000).map { key in Task { try await stores[key % 2][key].requireData() } }
        await Self.waitUntil { origin.running == 8 && limit.queuedCount == 992 }
        #expect(origin.started.count == 8)
        origin.gate.open()
        for (key, load) in loads.enumerated() { #expect(try await load.value == "value \(key)") }
        #expect(origin.maxRunning == 8)
        #expect(Set(origin.started).count == 1_000)
        #expect(limit.runningCount == 0 && limit.queuedCount == 0)
    }

    @Test func aFetchRefusedByAFullQueueFailsWithTheTypedErrorAndIsNotRetried() async throws {
        let origin = CountingOrigin()
        let limit = ConcurrencyLimit(maxConcurrent: 1, maxQueued: 0)
        let retrying = FetchPolicy(
            retry: RetryPolicy(maxAttempts: 5, baseDelay: .zero, jitter: .none), concurrencyLimit: limit)
        let store = KeyedStore(
            cache: MemoryCache<Int, String>(), manager: FlowableDataStateManager(fetchPolicy: retrying)
        ) { key in await origin.fetch(key) }
        let first = Task { try await store[1].requireData() }
        await Self.waitUntil { origin.running == 1 }
        await #expect(throws: ConcurrencyLimitError.queueFull(maxConcurrent: 1, maxQueued: 0)) {
            try await store[2].requireData()
        }
        #expect(origin.started == [1])
        origin.gate.open()
        #expect(try await first.value == "value 1")
        // The refusal left nothing behind: key 2 loads once a permit is free.
        #expect(try await store[2].requireData() == "value 2")
    }

    @Test func aQueuedFetchWhoseCallersLeftNeverCallsTheOrigin() async throws {
        let origin = CountingOrigin()
        let limit = ConcurrencyLimit(maxConcurrent: 2)
        let store = Self.store(origin, limit: limit)
        let running = (0..<2).map { key in Task { try await store[key].requireData() } }
        await Self.waitUntil { origin.running == 2 }
        let queued = (2..<10).map { key in Task { try await store[key].requireData() } }
        await Self.waitUntil { limit.queuedCount == 8 }
        for load in queued[0..<4] { load.cancel() }
        await Self.waitUntil { limit.queuedCount == 4 }
        origin.gate.open()
        for load in running { _ = try await load.value }
        for load in queued[0..<4] { await #expect(throws: CancellationError.self) { try await load.value } }
        for load in queued[4...] { _ = try await load.value }
        #expect(Set(origin.started) == Set([0, 1, 6, 7, 8, 9]))
        await Self.waitUntil { limit.runningCount == 0 && limit.queuedCount == 0 }
    }
}
