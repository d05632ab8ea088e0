import StoreFlowable
import StoreFlowableTesting

/// The resilience part: 100 concurrent requests for 100 different users become one batched origin
/// call; a flaky origin is recovered by retries with backoff (each event printed as it is reported);
/// 40 distinct misses under a concurrency limit of 4; 10 misses against a slow origin, where a limit
/// with a bounded line sheds what does not fit.
func showResilience(_ checks: inout Checks) async {
    await showBatching(&checks)
    print()
    await showRetries(&checks)
    print()
    await showConcurrencyLimit(&checks)
    print()
    await showLoadShedding(&checks)
}

/// A user-service error that says whether it is worth another attempt.
private struct ServiceUnavailable: Error, RetryableError, CustomStringConvertible {
    var retryAdvice: RetryAdvice { .retry }
    var description: String { "503 Service Unavailable" }
}

private func showBatching(_ checks: inout Checks) async {
    let batchSizes = LockedValue<[Int]>([])
    // The batch goes out when its 100th distinct key arrives, or when the window ends, whichever is first;
    // the window is long enough for 100 tasks to start on a busy machine.
    let users = BatchedOrigin<Int, String>(window: .milliseconds(250), maxBatchSize: 100) { ids in
        batchSizes.withLock { $0.append(ids.count) }
        return Dictionary(uniqueKeysWithValues: ids.map { ($0, .success("user \($0)")) })
    }
    let store = KeyedStore(cache: MemoryCache<Int, String>()) { id in try await users.load(id) }
    print("100 tasks call users[id].requireData() for ids 1…100 at once;")
    print("the store's fetch calls BatchedOrigin.load(id).")
    let names = await withTaskGroup(of: String?.self) { group in
        for id in 1...100 { group.addTask { try? await store[id].requireData() } }
        var names: [String] = []
        for await name in group { if let name { names.append(name) } }
        return names
    }
    let sizes = batchSizes.withLock { $0 }
    print("  values received: \(names.count)")
    print("  batch origin calls: \(sizes.count) (keys per call: \(sizes.map(String.init).joined(separator: ", ")))")
    checks.expect(names.count == 100, "every request should get its user")
    checks.expect(sizes == [100], "100 misses within the window should be one origin call of 100 keys")
}

private func showRetries(_ checks: inout Checks) async {
    let events = PrintingObserver()
    let calls = LockedValue(0)
    let manager = FlowableDataStateManager<Int>(
        fetchPolicy: FetchPolicy(
            retry: RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(20), maxDelay: .seconds(1), jitter: .none)),
        observer: events)
    let store = KeyedStore(cache: MemoryCache<Int, String>(), manager: manager) { id in
        let call = calls.withLock {
            $0 += 1; return $0
        }
        if call <= 2 { throw ServiceUnavailable() }
        return "user \(id)"
    }
    print("An origin that answers 503 twice, with RetryPolicy(maxAttempts: 4, baseDelay: 20 ms):")
    let value = try? await store[7].requireData()
    for line in events.lines { print("  \(line)") }
    print("  requireData() -> \(describe(value))")
    checks.expect(value == "user 7", "the third attempt should succeed")
    checks.expect(calls.withLock { $0 } == 3, "the origin should be called three times")
}

private func showConcurrencyLimit(_ checks: inout Checks) async {
    let limit = ConcurrencyLimit(maxConcurrent: 4)
    let running = LockedValue((now: 0, most: 0))
    let store = KeyedStore(
        cache: MemoryCache<Int, String>(),
        manager: FlowableDataStateManager(fetchPolicy: FetchPolicy(concurrencyLimit: limit))
    ) { id in
        running.withLock {
            $0.now += 1; $0.most = max($0.most, $0.now)
        }
        try? await Task.sleep(for: .milliseconds(2))  // the origin's latency
        running.withLock { $0.now -= 1 }
        return "product \(id)"
    }
    print("40 misses for 40 different products, ConcurrencyLimit(maxConcurrent: 4):")
    let served = await withTaskGroup(of: Bool.self) { group in
        for id in 1...40 { group.addTask { (try? await store[id].requireData()) != nil } }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    let most = running.withLock { $0.most }
    print("  served: \(served)   most origin calls at once: \(most)")
    checks.expect(served == 40, "every product should be served")
    checks.expect(most <= 4, "no more than 4 origin calls should run at once")
}

private func showLoadShedding(_ checks: inout Checks) async {
    let limit = ConcurrencyLimit(maxConcurrent: 2, maxQueued: 2)
    // The origin is slow: it answers only once the tour lets it (after every caller has arrived).
    let gate = LockedValue<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    let store = KeyedStore(
        cache: MemoryCache<Int, String>(),
        manager: FlowableDataStateManager(fetchPolicy: FetchPolicy(concurrencyLimit: limit))
    ) { id in
        await withCheckedContinuation { waiter in
            let now = gate.withLock { gate in
                if !gate.isOpen { gate.waiters.append(waiter) }
                return gate.isOpen
            }
            if now { waiter.resume() }
        }
        return "product \(id)"
    }
    print("10 misses at once against a slow origin, ConcurrencyLimit(maxConcurrent: 2, maxQueued: 2):")
    let refused = LockedValue(0)
    let served = await withTaskGroup(of: Bool.self) { group in
        for id in 1...10 {
            group.addTask {
                do {
                    return try await store[id].requireData() == "product \(id)"
                } catch ConcurrencyLimitError.queueFull {
                    refused.withLock { $0 += 1 }
                    return false
                } catch {
                    return false
                }
            }
        }
        // 2 run, 2 wait in line, and the 6 others are turned away at once, before the origin answers.
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while refused.withLock({ $0 }) < 6, ContinuousClock.now < deadline { await Task.yield() }
        let waiters = gate.withLock { gate in
            gate.isOpen = true
            defer { gate.waiters = [] }
            return gate.waiters
        }
        for waiter in waiters { waiter.resume() }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    print("  turned away at once (ConcurrencyLimitError.queueFull): \(refused.withLock { $0 })")
    print("  served once the origin answered: \(served)")
    checks.expect(refused.withLock { $0 } == 6, "6 callers should be turned away by the full line")
    checks.expect(served == 4, "the 2 running and the 2 waiting should be served")
}

/// Keeps each event as a line, with the time since the first one.
private final class PrintingObserver: StoreEventObserver {
    private let clock = ContinuousClock()
    private let state = LockedValue<(start: ContinuousClock.Instant?, lines: [String])>((nil, []))

    func observe(_ event: StoreEvent) {
        let now = clock.now
        state.withLock { state in
            let start = state.start ?? now
            state.start = start
            state.lines.append("\(stamp(start.duration(to: now)))  \(event.kind)")
        }
    }

    var lines: [String] { state.withLock { $0.lines } }
}
