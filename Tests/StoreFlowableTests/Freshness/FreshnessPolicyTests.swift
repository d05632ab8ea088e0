import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Every boundary of every window of ``FreshnessPolicy``, for plain and invalidated values.
struct FreshnessPolicyTests {
    let storedAt = CacheTime(nanosecondsSince1970: 1_000_000_000_000)
    let policy = FreshnessPolicy(
        freshFor: .seconds(10), staleWhileRevalidate: .seconds(5), staleIfError: .seconds(20), maxAge: .seconds(60))

    func freshness(at age: Duration, invalidated: Bool = false, _ policy: FreshnessPolicy? = nil) -> Freshness {
        (policy ?? self.policy).freshness(
            storedAt: storedAt, now: storedAt.advanced(by: age), isInvalidated: invalidated)
    }

    @Test func freshUntilJustBeforeFreshFor() {
        #expect(freshness(at: .zero) == .fresh)
        #expect(freshness(at: .seconds(10) - .nanoseconds(1)) == .fresh)
        #expect(freshness(at: .seconds(10)) == .staleWhileRevalidate)
    }

    @Test func staleWhileRevalidateWindowIsHalfOpen() {
        #expect(freshness(at: .seconds(15) - .nanoseconds(1)) == .staleWhileRevalidate)
        #expect(freshness(at: .seconds(15)) == .staleIfError)
    }

    @Test func staleIfErrorWindowIsHalfOpen() {
        #expect(freshness(at: .seconds(30) - .nanoseconds(1)) == .staleIfError)
        #expect(freshness(at: .seconds(30)) == .stale)
    }

    @Test func maxAgeWinsOverEveryWindow() {
        #expect(freshness(at: .seconds(60) - .nanoseconds(1)) == .stale)
        #expect(freshness(at: .seconds(60)) == .expired)
        let short = FreshnessPolicy(freshFor: .seconds(10), staleWhileRevalidate: .seconds(50), maxAge: .seconds(3))
        #expect(freshness(at: .seconds(2), short) == .fresh)
        #expect(freshness(at: .seconds(3), short) == .expired)
        #expect(freshness(at: .seconds(12), short) == .expired)
    }

    @Test func aTimestampInTheFutureIsStaleNotFresh() {
        #expect(freshness(at: .nanoseconds(-1)) == .stale)
        #expect(freshness(at: .seconds(-3600)) == .stale)
        #expect(freshness(at: .nanoseconds(-1), .forever) == .stale)
    }

    @Test func noPolicyNeverExpiresWithoutOverflow() {
        #expect(freshness(at: .seconds(Int64.max), .forever) == .fresh)
        let farFuture = FreshnessPolicy.forever.freshness(storedAt: .distantPast, now: .distantFuture)
        #expect(farFuture == .fresh)
        #expect(FreshnessPolicy.forever.lifetime == nil)
        #expect(!FreshnessPolicy.forever.isPastLifetime(storedAt: .distantPast, now: .distantFuture))
    }

    @Test func hugeWindowsDoNotOverflow() {
        let huge = FreshnessPolicy(
            freshFor: .seconds(Int64.max), staleWhileRevalidate: .seconds(Int64.max), staleIfError: .seconds(Int64.max))
        #expect(huge.freshness(storedAt: .distantPast, now: .distantFuture) == .fresh)
        #expect(huge.lifetime == .seconds(Int64.max) + .seconds(Int64.max))
    }

    @Test func alwaysFetchIsNeverFresh() {
        #expect(freshness(at: .zero, .alwaysFetch) == .stale)
    }

    @Test func negativeDurationsCountAsZero() {
        let policy = FreshnessPolicy(freshFor: .seconds(-5), staleWhileRevalidate: .seconds(-1))
        #expect(policy.freshFor == .zero)
        #expect(policy.staleWhileRevalidate == .zero)
        #expect(freshness(at: .zero, policy) == .stale)
    }

    @Test func anInvalidatedValueIsNeverServedWithoutAFetch() {
        #expect(freshness(at: .zero, invalidated: true) == .staleIfError)
        #expect(freshness(at: .seconds(12), invalidated: true) == .staleIfError)
        #expect(freshness(at: .seconds(30), invalidated: true) == .stale)
        #expect(freshness(at: .seconds(60), invalidated: true) == .expired)
        let noErrorWindow = FreshnessPolicy(freshFor: .seconds(10), staleWhileRevalidate: .seconds(5))
        #expect(freshness(at: .zero, invalidated: true, noErrorWindow) == .stale)
        #expect(freshness(at: .zero, invalidated: true, .forever) == .stale)
    }

    @Test func anInvalidatedValueKeepsOnlyItsOwnStaleIfErrorWindow() {
        // Inside the stale-while-revalidate window but past the (shorter) stale-if-error one.
        let policy = FreshnessPolicy(
            freshFor: .seconds(10), staleWhileRevalidate: .seconds(60), staleIfError: .seconds(5))
        #expect(freshness(at: .seconds(20), policy) == .staleWhileRevalidate)
        #expect(freshness(at: .seconds(20), invalidated: true, policy) == .stale)
        #expect(freshness(at: .seconds(12), invalidated: true, policy) == .staleIfError)
    }

    @Test func lifetimeIsMaxAgeOrTheEndOfTheLongestWindow() {
        #expect(policy.lifetime == .seconds(60))
        let noMax = FreshnessPolicy(
            freshFor: .seconds(10), staleWhileRevalidate: .seconds(5), staleIfError: .seconds(20))
        #expect(noMax.lifetime == .seconds(30))
        #expect(!noMax.isPastLifetime(storedAt: storedAt, now: storedAt.advanced(by: .seconds(30) - .nanoseconds(1))))
        #expect(noMax.isPastLifetime(storedAt: storedAt, now: storedAt.advanced(by: .seconds(30))))
        // A timestamp in the future is kept: it is stale, not past its lifetime.
        #expect(!noMax.isPastLifetime(storedAt: storedAt, now: storedAt.advanced(by: .seconds(-100))))
    }

    @Test func subSecondWindowsAreNotTruncated() {
        let policy = FreshnessPolicy(freshFor: .milliseconds(250))
        #expect(freshness(at: .milliseconds(249), policy) == .fresh)
        #expect(freshness(at: .milliseconds(250), policy) == .stale)
    }

    @Test func freshnessOrdersFromMostToLeastUsable() {
        #expect(Freshness.fresh.isServableWithoutFetch && Freshness.staleWhileRevalidate.isServableWithoutFetch)
        #expect(!Freshness.staleIfError.isServableWithoutFetch && Freshness.staleIfError.isServableOnError)
        #expect(!Freshness.stale.isServableOnError && Freshness.stale.isUsable)
        #expect(!Freshness.expired.isUsable)
    }
}

/// ``CacheTime`` arithmetic saturates and prints readably.
struct CacheTimeTests {
    @Test func arithmeticSaturates() {
        #expect(CacheTime.distantFuture.advanced(by: .seconds(1)) == .distantFuture)
        #expect(CacheTime.distantPast.advanced(by: .seconds(-1)) == .distantPast)
        #expect(CacheTime(nanosecondsSince1970: 0).advanced(by: .seconds(Int64.max)) == .distantFuture)
        let start = CacheTime(nanosecondsSince1970: 5)
        #expect(start.advanced(by: .nanoseconds(7)).nanosecondsSince1970 == 12)
        #expect(start.duration(to: CacheTime(nanosecondsSince1970: 2)) == .nanoseconds(-3))
        #expect(CacheTime.distantPast.duration(to: .distantFuture) > .seconds(Int64.max / 1_000_000_000))
    }

    @Test func systemClockReadsTheWallClock() {
        // 2020-01-01 and 2100-01-01: a wall clock set anywhere sensible reads between them.
        let now = SystemCacheClock().now.nanosecondsSince1970
        #expect(now > 1_577_836_800 * 1_000_000_000)
        #expect(now < 4_102_444_800 * 1_000_000_000)
    }

    @Test func manualClockMovesBothWays() {
        let clock = ManualCacheClock(CacheTime(nanosecondsSince1970: 100))
        clock.advance(by: .nanoseconds(50))
        #expect(clock.now.nanosecondsSince1970 == 150)
        clock.advance(by: .nanoseconds(-200))
        #expect(clock.now.nanosecondsSince1970 == -50)
        clock.set(to: CacheTime(nanosecondsSince1970: 7))
        #expect(clock.now.nanosecondsSince1970 == 7)
    }

    @Test func descriptionShowsSecondsAndNanoseconds() {
        #expect(CacheTime(nanosecondsSince1970: 1_500_000_000).description == "1.500000000s since 1970")
        #expect(CacheTime(nanosecondsSince1970: -500_000_000).description == "-0.500000000s since 1970")
    }
}
