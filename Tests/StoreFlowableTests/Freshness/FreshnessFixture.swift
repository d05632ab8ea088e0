import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// A ``KeyedStore`` over a ``TestKeyedCache`` with a manual clock and a scripted origin.
///
/// The policy: fresh for 10 s, stale-while-revalidate for 5 s after that, stale-if-error for 20 s
/// after that, never served past 60 s. So ages 0..<10 fresh, 10..<15 SWR, 15..<30 stale-if-error,
/// 30..<60 stale, 60... expired.
struct FreshnessFixture: Sendable {
    static let policy = FreshnessPolicy(
        freshFor: .seconds(10), staleWhileRevalidate: .seconds(5), staleIfError: .seconds(20), maxAge: .seconds(60))

    let clock = ManualCacheClock()
    let cache: TestKeyedCache<String, String>
    let origin: ScriptedOrigin<String>
    let stores: KeyedStore<TestKeyedCache<String, String>>

    /// - Parameters:
    ///   - cached: A value cached for "key", `age` old, or nothing.
    ///   - results: What the origin returns, in order; then "fresh-N" for call N.
    init(
        cached: String? = nil, age: Duration = .zero, origin results: [Result<String, any Error>] = [],
        otherwise fallback: (@Sendable (Int) -> Result<String, any Error>)? = { .success("fresh-\($0)") },
        policy: FreshnessPolicy = Self.policy
    ) {
        cache = TestKeyedCache(policy: policy, clock: clock)
        origin = ScriptedOrigin(results, otherwise: fallback)
        let origin = origin
        stores = KeyedStore(cache: cache) { _ in try await origin.fetch() }
        if let cached { cache.insert(cached, forKey: "key", storedAt: clock.now.advanced(by: .zeroSeconds - age)) }
    }

    /// The store of "key".
    var store: some StoreFlowable<String> { stores["key"] }

    /// The cached value of "key", if any.
    var cachedValue: String? { cache["key"]?.value }

    /// Waits until the cache holds `value` for "key".
    func waitForCached(_ value: String) async {
        await eventually { cache["key"]?.value == value }
    }

    /// Waits until the manager no longer tracks any key (every fetch finished, every stream released).
    func waitUntilIdle() async {
        await eventually { await stores.manager.trackedKeyCount == 0 }
    }
}

extension Duration {
    /// Zero, spelled so that `.zeroSeconds - age` reads as a negative offset.
    static var zeroSeconds: Duration { .zero }
}
