import StoreFlowableTesting
import Testing

@testable import StoreFlowable

// Doubles and fixtures of the independent review of `reloadFromCache()`; the tests are in
// `ReloadReviewTests.swift`.

/// A `KeyedCache` over a ``TestKeyedCache`` that runs a test's code inside the next read, write or mark
/// of a key (each hook runs once, then is gone), so that a test can call the store from inside any of
/// the store's cache callbacks, the reload's own read among them.
final class RRHookCache: KeyedCache {
    typealias Hook = @Sendable (_ key: String) async -> Void

    let base: TestKeyedCache<String, String>
    private let read = LockedValue<Hook?>(nil)
    private let set = LockedValue<Hook?>(nil)
    private let remove = LockedValue<Hook?>(nil)
    private let invalidate = LockedValue<Hook?>(nil)

    init(_ base: TestKeyedCache<String, String>) { self.base = base }

    var policy: FreshnessPolicy { base.policy }
    var clock: any CacheClock { base.clock }

    /// Runs `hook` inside the next `entry(forKey:)`, before the read.
    func onNextRead(_ hook: Hook?) { read.withLock { $0 = hook } }
    /// Runs `hook` inside the next `setEntry(_:forKey:)`, before the write.
    func onNextSet(_ hook: Hook?) { set.withLock { $0 = hook } }
    /// Runs `hook` inside the next `removeEntry(forKey:)`, before the removal.
    func onNextRemove(_ hook: Hook?) { remove.withLock { $0 = hook } }
    /// Runs `hook` inside the next `invalidateEntry(forKey:)`, before the mark.
    func onNextInvalidate(_ hook: Hook?) { invalidate.withLock { $0 = hook } }

    /// Takes the hook out of `slot` (so that it runs once) and runs it, outside the lock.
    private func runOnce(_ slot: LockedValue<Hook?>, _ key: String) async {
        let hook = slot.withLock { hook in
            let taken = hook
            hook = nil
            return taken
        }
        await hook?(key)
    }

    func entry(forKey key: String) async throws -> CacheEntry<String>? {
        await runOnce(read, key)
        return try await base.entry(forKey: key)
    }

    func setEntry(_ entry: CacheEntry<String>, forKey key: String) async throws {
        await runOnce(set, key)
        try await base.setEntry(entry, forKey: key)
    }

    func removeEntry(forKey key: String) async throws {
        await runOnce(remove, key)
        try await base.removeEntry(forKey: key)
    }

    func invalidateEntry(forKey key: String) async throws {
        await runOnce(invalidate, key)
        try await base.invalidateEntry(forKey: key)
    }

    func invalidateEntries(where isIncluded: @escaping @Sendable (String) -> Bool) async throws {
        try await base.invalidateEntries(where: isIncluded)
    }

    func removeAllEntries() async throws { try await base.removeAllEntries() }
}

/// A ``KeyedStore`` over a hookable ``TestKeyedCache`` with a manual clock and a scripted origin per
/// fixture, the policy of ``FreshnessFixture``: fresh for 10 s, never served from 60 s.
struct RRFixture: Sendable {
    let clock = ManualCacheClock()
    let cache: TestKeyedCache<String, String>
    let hooks: RRHookCache
    let origin: ScriptedOrigin<String>
    let stores: KeyedStore<RRHookCache>
    /// The origin calls running per key, and the most that ever ran at once for one key.
    let calls = LockedValue<(running: [String: Int], most: Int)>(([:], 0))

    /// - Parameters:
    ///   - cached: A fresh value cached for "key", or nothing.
    ///   - observer: The manager's observer.
    ///   - onFetch: Runs inside every origin call, before the scripted origin answers.
    init(
        cached: String? = nil, observer: (any StoreEventObserver)? = nil,
        onFetch: (@Sendable (_ key: String, _ stores: KeyedStore<RRHookCache>) async -> Void)? = nil
    ) {
        cache = TestKeyedCache(policy: FreshnessFixture.policy, clock: clock)
        hooks = RRHookCache(cache)
        origin = ScriptedOrigin([], otherwise: { .success("fresh-\($0)") })
        let origin = origin
        let itself = LockedValue<KeyedStore<RRHookCache>?>(nil)
        let calls = calls
        stores = KeyedStore(cache: hooks, manager: FlowableDataStateManager(observer: observer)) { key in
            calls.withLock { calls in
                calls.running[key, default: 0] += 1
                calls.most = max(calls.most, calls.running[key, default: 0])
            }
            defer { calls.withLock { $0.running[key, default: 0] -= 1 } }
            if let onFetch, let stores = itself.withLock({ $0 }) { await onFetch(key, stores) }
            return try await origin.fetch()
        }
        itself.withLock { $0 = stores }
        if let cached { cache.insert(cached, forKey: "key", storedAt: clock.now) }
    }

    /// The store of "key".
    var store: some StoreFlowable<String> { stores["key"] }

    /// The manager of the stores.
    var manager: FlowableDataStateManager<String> { stores.manager }

    /// Writes `value` for `key` as another process sharing the cache would: directly, fresh.
    func writeElsewhere(_ value: String, forKey key: String = "key") {
        cache.insert(value, forKey: key, storedAt: clock.now)
    }

    /// Waits until the manager tracks no key (every fetch finished, every stream released).
    func waitUntilIdle() async {
        await eventually { await manager.trackedKeyCount == 0 }
    }

    /// The most origin calls that ever ran at once for one key.
    var mostConcurrentCallsOfAKey: Int { calls.withLock { $0.most } }

    /// Waits until the write queue of "key" holds `count` writers behind the one writing.
    func waitForQueue(_ count: Int, key: String = "key") async {
        await eventually { await manager.writeQueueLength(for: key, String.self) == count }
    }
}

/// Counts the events an observer received by kind, and runs a test's code on each (synchronously, as
/// the library calls it).
final class RREventLog: StoreEventObserver {
    private let events = LockedValue<[String]>([])
    private let hook = LockedValue<(@Sendable (StoreEvent) -> Void)?>(nil)

    func observe(_ event: StoreEvent) {
        events.withLock { $0.append("\(event.kind)") }
        hook.withLock { $0 }?(event)
    }

    /// Runs `body` on every following event.
    func onEvent(_ body: (@Sendable (StoreEvent) -> Void)?) { hook.withLock { $0 = body } }

    /// How many events of the kind described as `description` arrived.
    func count(_ description: String) -> Int { events.withLock { $0.filter { $0 == description }.count } }
}

extension LoadingState where Content == String {
    /// Whether the state is `.completed(content)`.
    func isCompleted(with content: String) -> Bool {
        if case .completed(let shown, _, _) = self { return shown == content }
        return false
    }
}
