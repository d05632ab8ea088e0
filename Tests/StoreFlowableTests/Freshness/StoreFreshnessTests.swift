import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// The store's read paths honour every window of the freshness policy (see `FreshnessFixture` for the
/// ages of each window).
@Suite(.timeLimit(.minutes(1)))
struct StoreFreshnessTests {
    // MARK: requireData / getData from .both

    @Test func aFreshValueIsServedWithNoFetch() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(10) - .nanoseconds(1))
        #expect(try await fixture.store.requireData() == "cached")
        #expect(await fixture.store.getData() == "cached")
        #expect(fixture.origin.callCount == 0)
        #expect(await fixture.stores.manager.trackedKeyCount == 0)
    }

    @Test func aValueInsideTheStaleWhileRevalidateWindowIsServedAtOnceWhileOneFetchRefreshesIt() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(10))
        fixture.origin.hold()
        // Served while the origin is held: the caller does not wait for the fetch.
        #expect(try await fixture.store.requireData() == "cached")
        #expect(await fixture.store.getData() == "cached")
        await fixture.origin.waitForCalls(1)
        fixture.origin.release()
        await fixture.waitForCached("fresh-1")
        await fixture.waitUntilIdle()
        #expect(fixture.origin.callCount == 1)
        #expect(try await fixture.store.requireData() == "fresh-1")
    }

    @Test func theBackgroundRefreshCompletesThoughNobodyWaitsForIt() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(14))
        fixture.origin.hold()
        let caller = Task { try await fixture.store.requireData() }
        #expect(try await caller.value == "cached")
        await fixture.origin.waitForCalls(1)
        // The caller left long ago; the pinned fetch is not cancelled.
        fixture.origin.release()
        await fixture.waitForCached("fresh-1")
        #expect(fixture.origin.cancelledCount == 0)
        await fixture.waitUntilIdle()
    }

    @Test func aCallerLeavingTheBackgroundRefreshDoesNotCancelIt() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(12))
        fixture.origin.hold()
        #expect(try await fixture.store.requireData() == "cached")
        await fixture.origin.waitForCalls(1)
        // A caller joins the background fetch, then gives up: the fetch goes on.
        let joiner = Task { try await fixture.store.requireData(from: .origin) }
        await eventually { await fixture.stores.manager.registryCounts(for: "key", String.self).waiters == 1 }
        joiner.cancel()
        _ = try? await joiner.value
        fixture.origin.release()
        await fixture.waitForCached("fresh-1")
        #expect(fixture.origin.cancelledCount == 0)
        await fixture.waitUntilIdle()
    }

    @Test func justPastTheStaleWhileRevalidateWindowTheCallerWaitsForTheFetch() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(15))
        #expect(try await fixture.store.requireData() == "fresh-1")
        #expect(fixture.cachedValue == "fresh-1")
    }

    @Test func aFailedRefreshKeepsTheCachedValue() async throws {
        // StoreFlowable 4.x cleared the cache when a refresh failed.
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(1), origin: [.failure(TestError("down"))])
        await fixture.store.refresh()
        #expect(fixture.cachedValue == "cached")
        #expect(try await fixture.store.requireData() == "cached")
    }

    @Test func insideTheStaleIfErrorWindowAFailingFetchServesTheCachedValue() async throws {
        let fixture = FreshnessFixture(
            cached: "cached", age: .seconds(30) - .nanoseconds(1), origin: [.failure(TestError("down"))])
        #expect(try await fixture.store.requireData() == "cached")
        // The cache is kept (StoreFlowable 4.x cleared it on a failed refresh).
        #expect(fixture.cachedValue == "cached")
    }

    @Test func insideTheStaleIfErrorWindowASuccessfulFetchIsServed() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(20))
        #expect(try await fixture.store.requireData() == "fresh-1")
    }

    @Test func pastTheStaleIfErrorWindowTheErrorIsThrown() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(30), origin: [.failure(TestError("down"))])
        await #expect(throws: TestError("down")) { try await fixture.store.requireData() }
        #expect(await fixture.store.getData() == "fresh-2")
    }

    @Test func aValuePastMaxAgeIsNeverServedNotEvenOnError() async throws {
        let fixture = FreshnessFixture(
            cached: "cached", age: .seconds(60), origin: [.failure(TestError("down")), .failure(TestError("down"))])
        await #expect(throws: TestError("down")) { try await fixture.store.requireData() }
        #expect(await fixture.store.getData() == nil)
        await #expect(throws: StoreFlowableError.self) { try await fixture.store.requireData(from: .cache) }
    }

    @Test func maxAgeBelowTheStaleIfErrorWindowStillWins() async throws {
        let policy = FreshnessPolicy(freshFor: .seconds(1), staleIfError: .seconds(100), maxAge: .seconds(5))
        let inside = FreshnessFixture(
            cached: "cached", age: .seconds(5) - .nanoseconds(1), origin: [.failure(TestError("down"))],
            policy: policy)
        #expect(try await inside.store.requireData() == "cached")
        let past = FreshnessFixture(
            cached: "cached", age: .seconds(5), origin: [.failure(TestError("down"))], policy: policy)
        await #expect(throws: TestError("down")) { try await past.store.requireData() }
    }

    @Test func aValueStampedInTheFutureIsFetchedAgain() async throws {
        // The wall clock went back an hour after the value was stored.
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(-3600))
        #expect(try await fixture.store.requireData() == "fresh-1")
    }

    @Test func aCancelledCallerInsideTheStaleIfErrorWindowGetsCancellationNotTheStaleValue() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(20))
        fixture.origin.hold()
        let caller = Task { try await fixture.store.requireData() }
        await fixture.origin.waitForCalls(1)
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        fixture.origin.release()
        await fixture.waitUntilIdle()
    }

    @Test func readingNeverMakesAValueYounger() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(9))
        let storedAt = fixture.cache["key"]?.storedAt
        for _ in 0..<5 { _ = try await fixture.store.requireData() }
        #expect(fixture.cache["key"]?.storedAt == storedAt)
        fixture.clock.advance(by: .seconds(6))  // 15 s old: past the stale-while-revalidate window
        #expect(try await fixture.store.requireData() == "fresh-1")
    }

    // MARK: requireData(from: .cache), validate

    @Test func fromCacheServesFreshAndStaleWhileRevalidateValuesWithoutFetching() async throws {
        let fresh = FreshnessFixture(cached: "cached", age: .seconds(1))
        #expect(try await fresh.store.requireData(from: .cache) == "cached")
        let revalidating = FreshnessFixture(cached: "cached", age: .seconds(12))
        #expect(try await revalidating.store.requireData(from: .cache) == "cached")
        #expect(await revalidating.stores.manager.trackedKeyCount == 0)
        #expect(revalidating.origin.callCount == 0)
    }

    @Test func fromCacheRefusesStaleIfErrorAndStaleValues() async throws {
        for age in [Duration.seconds(15), .seconds(30), .seconds(60)] {
            let fixture = FreshnessFixture(cached: "cached", age: age)
            await #expect(throws: StoreFlowableError.self) { try await fixture.store.requireData(from: .cache) }
        }
    }

    @Test func validateWaitsForTheRefreshOfAnyValueThatIsNotFresh() async throws {
        for age in [Duration.seconds(10), .seconds(15), .seconds(30), .seconds(60)] {
            let fixture = FreshnessFixture(cached: "cached", age: age)
            await fixture.store.validate()
            #expect(fixture.cachedValue == "fresh-1", "age \(age)")
        }
        let fresh = FreshnessFixture(cached: "cached", age: .seconds(9))
        await fresh.store.validate()
        #expect(fresh.origin.callCount == 0)
    }

    @Test func fromOriginAlwaysFetches() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .zero)
        #expect(try await fixture.store.requireData(from: .origin) == "fresh-1")
    }

    // MARK: publish

    @Test func publishShowsAStaleWhileRevalidateValueAsLoadingThenTheFreshValue() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(12))
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(recorder.states.map(\.content) == ["cached", "fresh-1"])
        #expect(recorder.states.first?.isLoading == true)
        recorder.cancel()
    }

    @Test func publishShowsAStaleIfErrorValueAsTheErrorsContent() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(20), origin: [.failure(TestError("down"))])
        let recorder = StateRecorder(fixture.store.publish())
        let latest = try await recorder.waitForLatest { $0.isError }
        #expect(latest.content == "cached")
        recorder.cancel()
    }

    @Test func publishNeverShowsAValuePastMaxAge() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(61), origin: [.failure(TestError("down"))])
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isError }
        #expect(recorder.states.allSatisfy { $0.content == nil })
        recorder.cancel()
    }

    @Test func publishShowsAFreshValueAsCompletedWithNoFetch() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(3))
        let recorder = StateRecorder(fixture.store.publish())
        try await recorder.waitForLatest { $0.isCompleted }
        #expect(recorder.states.count == 1)
        #expect(fixture.origin.callCount == 0)
        recorder.cancel()
    }

    // MARK: Stress

    @Test func aThousandCallersInsideTheStaleWhileRevalidateWindowAreAnsweredAtOnceWithOneFetch() async throws {
        let fixture = FreshnessFixture(cached: "cached", age: .seconds(11))
        fixture.origin.hold()
        let stores = fixture.stores
        // Every caller returns while the origin is held: none of them waits for the fetch.
        let answers = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<1_000 { group.addTask { try? await stores["key"].requireData() } }
            var answers: [String?] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
        #expect(answers.count == 1_000)
        #expect(answers.allSatisfy { $0 == "cached" })
        await fixture.origin.waitForCalls(1)
        fixture.origin.release()
        await fixture.waitForCached("fresh-1")
        await fixture.waitUntilIdle()
        #expect(fixture.origin.callCount == 1)
    }
}
