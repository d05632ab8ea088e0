import Benchmark
import StoreFlowable

// MARK: 12. Batching

/// 100 concurrent loads of 100 distinct keys on an empty cache: through 100 stores over a
/// `BatchedOrigin` (one batch, sent when its 100th key arrives), against the primitive underneath:
/// calling the batch function by hand once and handing each of 100 child tasks its key's value.
func batchBenchmarks() {
    // The store's count varies from run to run with how the 100 fetch tasks are scheduled (a task's
    // allocator takes a new slab when it runs deeper): 10,000 to 12,000 were seen; 15 % covers that.
    let config = configuration(mallocRelativeTolerance: 15)
    let keys = Array(0..<100)

    Benchmark("Batch.baseline.byHand100", configuration: config) { benchmark in
        let results = await fetchUsers(keys)
        let served = await withTaskGroup(of: Int.self) { group in
            for key in keys {
                group.addTask { (try? results[key]?.get())?.id ?? -1 }
            }
            return await group.reduce(0) { $0 + ($1 >= 0 ? 1 : 0) }
        }
        if served != keys.count { benchmark.error("a key was not served") }
    }

    Benchmark("Batch.store100", configuration: config) { benchmark in
        let calls = Locked(0)
        // A window longer than any run: the batch goes out when its 100th distinct key arrives.
        let batch = BatchedOrigin<Int, User>(window: .seconds(60), maxBatchSize: 100) { keys in
            calls.withLock { $0 += 1 }
            return await fetchUsers(keys)
        }
        let store = KeyedStore(cache: MemoryCache<Int, User>()) { key in try await batch.load(key) }
        let served = await withTaskGroup(of: Int.self) { group in
            for key in keys {
                group.addTask { (try? await store[key].requireData())?.id ?? -1 }
            }
            return await group.reduce(0) { $0 + ($1 >= 0 ? 1 : 0) }
        }
        if served != keys.count { benchmark.error("a key was not served") }
        let count = calls.withLock { $0 }
        if count != 1 { benchmark.error("100 keys made \(count) batch calls, not 1") }
    }
}

/// The batch function both sides call: a user for every key.
private func fetchUsers(_ keys: [Int]) async -> [Int: Result<User, any Error>] {
    var results: [Int: Result<User, any Error>] = [:]
    results.reserveCapacity(keys.count)
    for key in keys { results[key] = .success(User(id: key)) }
    return results
}
