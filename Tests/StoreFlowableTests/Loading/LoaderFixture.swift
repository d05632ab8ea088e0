import StoreFlowable
import StoreFlowableTesting

/// A `KeyedStore` of strings over a `TestKeyedCache` on a manual clock, fetching from a scripted origin,
/// for the loader tests.
struct LoaderFixture: Sendable {
    /// Fresh for 10 s, stale-while-revalidate for 5 s more, stale-if-error for 20 s, never past 60 s.
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
        otherwise fallback: (@Sendable (Int) -> Result<String, any Error>)? = { .success("fresh-\($0)") }
    ) {
        cache = TestKeyedCache(policy: Self.policy, clock: clock)
        let origin = ScriptedOrigin(results, otherwise: fallback)
        self.origin = origin
        stores = KeyedStore(cache: cache) { _ in try await origin.fetch() }
        if let cached {
            cache.insert(cached, forKey: "key", storedAt: clock.now.advanced(by: .zero - age), isInvalidated: false)
        }
    }

    /// Waits until the store tracks no key: every stream released, every fetch ended.
    func waitUntilReleased() async {
        await eventually { await stores.manager.trackedKeyCount == 0 }
    }
}

/// Waits, on the main actor, until `condition` holds, letting other main-actor work run between checks.
/// Bounded by the test's `.timeLimit`: it gives up when the test is cancelled.
@MainActor
func eventuallyOnMain(_ condition: () -> Bool) async {
    while !Task.isCancelled, !condition() {
        await Task.yield()
    }
}

/// Waits, on the main actor, until the async `condition` holds, yielding between checks. Bounded by the
/// test's `.timeLimit`: it gives up when the test is cancelled.
@MainActor
func eventuallyOnMain(_ condition: @MainActor () async -> Bool) async {
    while !Task.isCancelled, !(await condition()) {
        await Task.yield()
    }
}
