import Foundation
import StoreFlowable

/// A wall clock that shows the time the tour sets: it moves only when told to, so each read of the
/// freshness part lands exactly in the window the tour says. `StoreFlowableTesting` has the same thing
/// for tests, `ManualCacheClock`.
final class DemoClock: CacheClock, @unchecked Sendable {
    // Safety of `@unchecked Sendable`: `current` is read and written only while `lock` is held.
    private let lock = NSLock()
    private let start: CacheTime
    private var current: CacheTime

    /// Creates a clock showing the system's current time, as `t = 0 s`.
    init() {
        start = SystemCacheClock().now
        current = start
    }

    /// The time the clock shows.
    var now: CacheTime {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Moves the clock to `seconds` after its start.
    func set(seconds: Int) {
        lock.lock()
        defer { lock.unlock() }
        current = start.advanced(by: .seconds(seconds))
    }

    /// How far `time` is from the clock's start, as `t=12 s`.
    func label(_ time: CacheTime) -> String {
        "t=\(start.duration(to: time).components.seconds) s"
    }
}

/// The freshness part: one user read at ages that fall in each window of a policy, on a clock the tour
/// moves, with the clock's time printed next to every value served.
///
/// The policy: fresh for 10 s; then served at once while one fetch refreshes it for 5 s
/// (stale-while-revalidate); served in place of a failing fetch's error for 30 s (stale-if-error); never
/// served from 60 s (maxAge).
func showFreshness(_ checks: inout Checks) async {
    let clock = DemoClock()
    let policy = FreshnessPolicy(
        freshFor: .seconds(10), staleWhileRevalidate: .seconds(5), staleIfError: .seconds(30), maxAge: .seconds(60))
    let cache = MemoryCache<Int, User>(policy: policy, clock: clock)
    let origin = DemoOrigin(latency: .milliseconds(20))
    let store = DemoRepository.users(cache: cache, origin: origin)[1]
    let steps = FreshnessSteps(clock: clock, cache: cache)
    let ada = { (revision: Int) in User(id: 1, name: "Ada", revision: revision) }

    print("policy: fresh 10 s, then stale-while-revalidate 5 s and stale-if-error")
    print("30 s; maxAge 60 s. The cache's clock moves only when the tour moves it.")

    var served = await steps.at(0, "requireData()") { await require(store) }
    steps.note("nothing cached: fetched, stored at \(steps.storedAt)")
    var calls = await origin.callCount
    checks.expect(served == ada(1) && calls == 1, "an empty cache should fetch rev 1, once")

    served = await steps.at(5, "requireData()") { await require(store) }
    steps.note("fresh: no fetch")
    calls = await origin.callCount
    checks.expect(served == ada(1) && calls == 1, "a fresh value should be served with no fetch")

    served = await steps.at(12, "requireData()") { await require(store) }
    await store.validate()  // waits for the background fetch
    calls = await origin.callCount
    steps.note("stale-while-revalidate: served at once; the one fetch it started")
    steps.note("ran behind it and stored \(describe(cache[1])) at \(steps.storedAt)")
    checks.expect(served == ada(1), "inside stale-while-revalidate the cached rev 1 should come at once")
    checks.expect(calls == 2 && cache[1] == ada(2), "one background fetch should store rev 2")

    print("origin goes down")
    await origin.setFailing(true)
    served = await steps.at(30, "requireData()") { await require(store) }
    steps.note("stale-if-error: the fetch failed; the cached value instead")
    checks.expect(served == ada(2), "inside stale-if-error the cached rev 2 should replace the error")

    served = await steps.at(65, "requireData()") { await require(store) }
    steps.note("stale, outside every window: the fetch's error is thrown")
    checks.expect(served == nil, "a stale value outside the windows should not replace the error")

    served = await steps.at(80, "getData(from: .cache)") { await store.getData(from: .cache).map(Result.success) }
    steps.note("past maxAge: never served; the cache dropped it (count: \(cache.count))")
    checks.expect(served == nil && cache.count == 0, "a value past maxAge should never be served")

    print("origin comes back")
    await origin.setFailing(false)
    served = await steps.at(80, "requireData()") { await require(store) }
    steps.note("nothing usable cached: fetched, stored at \(steps.storedAt)")
    checks.expect(served == ada(3), "a miss should fetch rev 3")

    print("try await store.invalidate()   // the value stays, marked stale")
    do {
        try await store.invalidate()
    } catch {
        checks.expect(false, "invalidate() should not throw \(error)")
    }
    served = await steps.at(81, "getData(from: .cache)") { await store.getData(from: .cache).map(Result.success) }
    steps.note("invalidated: never served without a fetch")
    checks.expect(served == nil, "an invalidated value should not be served from the cache")
    served = await steps.at(81, "requireData()") { await require(store) }
    steps.note("invalidated: fetched again")
    checks.expect(served == ada(4), "the read after invalidate() should fetch rev 4")
}

/// Calls `requireData()` on `store`, returning its value or its error.
private func require(_ store: some StoreFlowable<User>) async -> Result<User, any Error>? {
    do {
        return .success(try await store.requireData())
    } catch {
        return .failure(error)
    }
}

/// Prints the steps of the freshness part: the clock's time, the call and what it served, then notes.
private struct FreshnessSteps {
    let clock: DemoClock
    let cache: MemoryCache<Int, User>

    /// Moves the clock to `seconds` after its start, runs `call` (named `name`) and prints a line with
    /// the time, the call, what it returned and the age the cached user had.
    ///
    /// - Returns: The user served, or `nil` when the call threw or returned `nil`.
    func at(_ seconds: Int, _ name: String, _ call: () async -> Result<User, any Error>?) async -> User? {
        // Read before the clock moves, so that an entry the move expires is still seen (and its age shown).
        let storedAt = cache.entry(forKey: 1)?.storedAt
        clock.set(seconds: seconds)
        let outcome = await call()
        let shown: String
        let served: User?
        switch outcome {
        case .success(let user): (shown, served) = ("\(user)", user)
        case .failure(let error): (shown, served) = ("throws \(error)", nil)
        case nil: (shown, served) = ("nil", nil)
        }
        let age = storedAt.map { storedAt in "  (age \(storedAt.duration(to: clock.now).components.seconds) s)" }
        print("[\(clock.label(clock.now))]".padding(to: 9) + " \(name) -> \(shown)\(age ?? "")")
        return served
    }

    /// Prints `text` under the last step.
    func note(_ text: String) {
        print("          \(text)")
    }

    /// When the cached user was stored, on the clock (`t=12 s`), or `-`.
    var storedAt: String {
        cache.entry(forKey: 1).map { entry in clock.label(entry.storedAt) } ?? "-"
    }
}
