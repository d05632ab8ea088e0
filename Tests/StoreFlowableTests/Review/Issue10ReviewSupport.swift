import StoreFlowableTesting
import Testing

@testable import StoreFlowable

// Doubles and fixtures of the independent review of issue 10 (freshness, background revalidation and
// invalidation); the tests are in `Issue10ReviewTests.swift`.

/// A `KeyedCache` over a ``TestKeyedCache`` that runs a test's code inside `invalidateEntry(forKey:)`
/// (before marking) and `setEntry(_:forKey:)` (before writing), so that a test can call the store from
/// inside the store's own cache write.
final class R10HookCache: KeyedCache {
    typealias Hook = @Sendable (_ key: String) async throws -> Void

    let base: TestKeyedCache<String, String>
    private let hooks = LockedValue<(invalidate: Hook?, set: Hook?)>((nil, nil))

    init(_ base: TestKeyedCache<String, String>) { self.base = base }

    var policy: FreshnessPolicy { base.policy }
    var clock: any CacheClock { base.clock }

    /// Runs `hook` inside every following `invalidateEntry(forKey:)`, before the mark.
    func onInvalidate(_ hook: Hook?) { hooks.withLock { $0.invalidate = hook } }
    /// Runs `hook` inside every following `setEntry(_:forKey:)`, before the write.
    func onSet(_ hook: Hook?) { hooks.withLock { $0.set = hook } }

    func entry(forKey key: String) async throws -> CacheEntry<String>? { try await base.entry(forKey: key) }

    func setEntry(_ entry: CacheEntry<String>, forKey key: String) async throws {
        if let hook = hooks.withLock({ $0.set }) { try await hook(key) }
        try await base.setEntry(entry, forKey: key)
    }

    func removeEntry(forKey key: String) async throws { try await base.removeEntry(forKey: key) }

    func invalidateEntry(forKey key: String) async throws {
        if let hook = hooks.withLock({ $0.invalidate }) { try await hook(key) }
        try await base.invalidateEntry(forKey: key)
    }

    func invalidateEntries(where isIncluded: @escaping @Sendable (String) -> Bool) async throws {
        try await base.invalidateEntries(where: isIncluded)
    }

    func removeAllEntries() async throws { try await base.removeAllEntries() }
}

/// A ``KeyedStore`` over a hookable ``TestKeyedCache`` with a manual clock and a scripted origin.
///
/// The default policy: fresh for 10 s, stale-while-revalidate for 5 s after that, stale-if-error for
/// 20 s after that, never served from 60 s. So ages 0..<10 fresh, 10..<15 stale-while-revalidate,
/// 15..<30 stale-if-error, 30..<60 stale, 60... expired.
struct R10Fixture: Sendable {
    static let policy = FreshnessPolicy(
        freshFor: .seconds(10), staleWhileRevalidate: .seconds(5), staleIfError: .seconds(20), maxAge: .seconds(60))

    let clock = ManualCacheClock()
    let cache: TestKeyedCache<String, String>
    let hooks: R10HookCache
    let origin: ScriptedOrigin<String>
    let stores: KeyedStore<R10HookCache>
    /// The origin calls by key, in order.
    let calls = LockedValue([String]())

    /// - Parameters:
    ///   - cached: A value cached for "key", `age` old, or nothing.
    ///   - results: What the origin returns, in order; then "fresh-N" for call N.
    ///   - onFetch: Runs inside every origin call, before the scripted origin answers.
    init(
        cached: String? = nil, age: Duration = .zero, origin results: [Result<String, any Error>] = [],
        otherwise fallback: (@Sendable (Int) -> Result<String, any Error>)? = { .success("fresh-\($0)") },
        policy: FreshnessPolicy = Self.policy,
        onFetch: (@Sendable (_ key: String, _ stores: KeyedStore<R10HookCache>) async throws -> Void)? = nil
    ) {
        cache = TestKeyedCache(policy: policy, clock: clock)
        hooks = R10HookCache(cache)
        origin = ScriptedOrigin(results, otherwise: fallback)
        let origin = origin
        let calls = calls
        let itself = LockedValue<KeyedStore<R10HookCache>?>(nil)
        stores = KeyedStore(cache: hooks) { key in
            calls.withLock { $0.append(key) }
            if let onFetch, let stores = itself.withLock({ $0 }) { try await onFetch(key, stores) }
            return try await origin.fetch()
        }
        itself.withLock { $0 = stores }
        if let cached { put(cached, age: age) }
    }

    /// The store of "key".
    var store: some StoreFlowable<String> { stores["key"] }

    /// Stores `value` for `key`, `age` old by the clock.
    func put(_ value: String, forKey key: String = "key", age: Duration = .zero, invalidated: Bool = false) {
        cache.insert(value, forKey: key, storedAt: clock.now.advanced(by: .zero - age), isInvalidated: invalidated)
    }

    /// The entry of "key", if any.
    var entry: CacheEntry<String>? { cache["key"] }

    /// Whether "key" holds `value`, unmarked and younger than `freshFor`: a value the next read serves
    /// with no fetch.
    func holdsFresh(_ value: String, forKey key: String = "key") -> Bool {
        guard let entry = cache[key], entry.value == value else { return false }
        return cache.policy.freshness(of: entry, now: clock.now) == .fresh
    }

    /// Waits until the manager tracks no key (every fetch finished, every stream released).
    func waitUntilIdle() async {
        await eventually { await stores.manager.trackedKeyCount == 0 }
    }

    /// Waits until nothing runs for `key` and nobody uses it; a remembered error may keep it tracked.
    func waitUntilQuiet(_ key: String = "key") async {
        await eventually { await stores.manager.isIdle(key, String.self) }
    }
}

/// Collects the states of one stream in a task of its own, so that a test can wait for a given state.
final class R10Recorder: Sendable {
    private let states = LockedValue([LoadingState<String>]())
    private let task: LockedValue<Task<Void, Never>?> = LockedValue(nil)

    init(_ stream: AsyncStream<LoadingState<String>>) {
        let states = states
        task.withLock {
            $0 = Task {
                for await state in stream { states.withLock { $0.append(state) } }
            }
        }
    }

    /// The states received so far, rendered as "loading(x)", "completed(x)" or "error(x)".
    var rendered: [String] { states.withLock { $0 }.map(Self.render) }

    /// Waits until `count` states arrived.
    func waitForStates(_ count: Int) async {
        await eventually { states.withLock { $0.count } >= count }
    }

    /// Waits until a state satisfying `condition` arrived.
    func waitFor(_ condition: @escaping @Sendable (LoadingState<String>) -> Bool) async {
        await eventually { states.withLock { $0.contains(where: condition) } }
    }

    /// Ends the stream.
    func cancel() { task.withLock { $0 }?.cancel() }

    static func render(_ state: LoadingState<String>) -> String {
        switch state {
        case .loading(let content): "loading(\(content ?? "nil"))"
        case .completed(let content, _, _): "completed(\(content))"
        case .error(let content, _): "error(\(content ?? "nil"))"
        }
    }
}
