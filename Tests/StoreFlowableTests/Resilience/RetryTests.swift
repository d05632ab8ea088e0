import StoreFlowableTesting
import Testing

@testable import StoreFlowable

@Suite("Retries through the store")
struct RetryTests {
    private static let noJitter = RetryPolicy(
        maxAttempts: 3, baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: .none)

    @Test(.timeLimit(.minutes(1)))
    func attemptsAndDelaysAreExactlyThePolicys() async throws {
        let fixture = RetryFixture(
            [.failure(AdvisedError.transient), .failure(AdvisedError.transient), .success("value")],
            policy: Self.noJitter)
        let store = fixture.store
        let caller = Task { try await store.requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        #expect(fixture.origin.callCount == 1)
        fixture.clock.advance(by: .milliseconds(99))
        #expect(fixture.clock.sleeperCount == 1)
        fixture.clock.advance(by: .milliseconds(1))
        await fixture.origin.waitForCalls(2)
        await fixture.clock.sleepers(atLeast: 1)
        fixture.clock.advance(by: .milliseconds(199))
        #expect(fixture.origin.callCount == 2)
        fixture.clock.advance(by: .milliseconds(1))
        #expect(try await caller.value == "value")
        #expect(fixture.origin.callCount == 3)
        #expect(
            fixture.summary == [
                "miss", "started 1", "failed 1 0ms retrying", "retry 2 in 100ms", "started 2", "failed 2 0ms retrying",
                "retry 3 in 200ms", "started 3", "succeeded 3 0ms",
            ])
    }

    @Test(.timeLimit(.minutes(1)))
    func maxElapsedStopsRetryingASlowOrigin() async throws {
        // Each attempt takes 2 s on the manual clock (the origin advances it, as a timeout would).
        let clockBox = LockedValue<ManualClock?>(nil)
        var policy = RetryPolicy(maxAttempts: 5, baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: .none)
        policy.maxElapsed = .seconds(3)
        let fixture = RetryFixture([], policy: policy) { _ in
            clockBox.withLock { $0 }?.advance(by: .seconds(2))
            return .failure(AdvisedError.transient)
        }
        clockBox.withLock { $0 = fixture.clock }
        let store = fixture.store
        let caller = Task { try await store.requireData() }
        // Attempt 1 fails at 2 s: 2 s + 100 ms is within 3 s, so attempt 2 starts at 2.1 s.
        await fixture.clock.sleepers(atLeast: 1)
        fixture.clock.advance(by: .milliseconds(100))
        // Attempt 2 fails at 4.1 s: past the bound, so the fetch ends with its error.
        await #expect(throws: AdvisedError.self) { try await caller.value }
        #expect(fixture.origin.callCount == 2)
        #expect(
            fixture.summary == [
                "miss", "started 1", "failed 1 2000ms retrying", "retry 2 in 100ms", "started 2", "failed 2 2000ms",
            ])
    }

    @Test(.timeLimit(.minutes(1)))
    func maxElapsedCountsTheWaitForTheConcurrencyLimit() async throws {
        let clock = ManualClock()
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        var policy = RetryPolicy(maxAttempts: 5, baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: .none)
        policy.maxElapsed = .seconds(3)
        let origin = ScriptedOrigin<String>([], otherwise: { _ in .failure(AdvisedError.transient) })
        let manager = FlowableDataStateManager<Int>(
            fetchPolicy: FetchPolicy(retry: policy, concurrencyLimit: limit, clock: clock))
        let store = TestStoreCallback(key: 1, manager: manager, cache: InMemoryCache<String>(), origin: origin).create()
        // Another caller of the limit holds its only permit while the fetch waits 5 s for it.
        let gate = Gate()
        let holder = Task { try await limit.run { await gate.wait() } }
        await gate.arrived()
        let caller = Task { try await store.requireData() }
        while limit.queuedCount == 0 { await Task.yield() }
        clock.advance(by: .seconds(5))
        gate.open()
        try await holder.value
        // The first attempt fails at once, 5 s after the fetch began: no retry.
        await #expect(throws: AdvisedError.self) { try await caller.value }
        #expect(origin.callCount == 1)
        #expect(clock.sleeperCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func jitterComesFromTheInjectedRandomSource() async throws {
        let numbers = LockedValue([0.5, 0.25])
        let policy = RetryPolicy(
            maxAttempts: 3, baseDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: .full,
            random: { numbers.withLock { $0.removeFirst() } })
        let fixture = RetryFixture(
            [.failure(AdvisedError.transient), .failure(AdvisedError.transient), .success("value")], policy: policy)
        let store = fixture.store
        let caller = Task { try await store.requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        fixture.clock.advance(by: .milliseconds(50))
        await fixture.origin.waitForCalls(2)
        await fixture.clock.sleepers(atLeast: 1)
        fixture.clock.advance(by: .milliseconds(50))
        #expect(try await caller.value == "value")
        #expect(fixture.summary.filter { $0.hasPrefix("retry") } == ["retry 2 in 50ms", "retry 3 in 50ms"])
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellingTheLastCallerDuringTheBackoffEndsTheFetch() async throws {
        let fixture = RetryFixture([.failure(AdvisedError.transient)], policy: Self.noJitter) { _ in .success("late") }
        let store = fixture.store
        let caller = Task { try await store.requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        await fixture.waitUntilIdle()
        #expect(fixture.clock.sleeperCount == 0)
        fixture.clock.advance(by: .seconds(60))
        await fixture.waitUntilIdle()
        #expect(fixture.origin.callCount == 1)
        #expect(!fixture.summary.contains("started 2"))
    }

    @Test(.timeLimit(.minutes(1)))
    func callersArrivingDuringTheBackoffJoinTheSameFetch() async throws {
        let fixture = RetryFixture([.failure(AdvisedError.transient), .success("value")], policy: Self.noJitter)
        let store = fixture.store
        let first = Task { try await store.requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        let second = Task { try await store.requireData() }
        await fixture.events.waitForEvents(6)
        #expect(fixture.summary.suffix(2) == ["miss", "joined"])
        // The first caller leaving does not end the fetch the second one waits for.
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        fixture.clock.advance(by: .milliseconds(100))
        #expect(try await second.value == "value")
        #expect(fixture.origin.callCount == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func subscribersSeeLoadingThroughTheRetriesAndTheErrorOnlyAtTheEnd() async throws {
        let fixture = RetryFixture([], policy: Self.noJitter) { _ in .failure(AdvisedError.transient) }
        let recorder = StateRecorder(fixture.store.publish())
        await fixture.clock.sleepers(atLeast: 1)
        fixture.clock.advance(by: .milliseconds(100))
        await fixture.origin.waitForCalls(2)
        await fixture.clock.sleepers(atLeast: 1)
        #expect(recorder.states.allSatisfy { if case .loading = $0 { true } else { false } })
        fixture.clock.advance(by: .milliseconds(200))
        try await recorder.waitForLatest { if case .error = $0 { true } else { false } }
        #expect(fixture.origin.callCount == 3)
        let errors = recorder.states.filter { if case .error = $0 { true } else { false } }
        #expect(errors.count == 1)
        if case .error(_, let error) = recorder.states.last { #expect(error is AdvisedError) }
        #expect(fixture.summary.last == "failed 3 0ms")
        recorder.cancel()
    }

    @Test(.timeLimit(.minutes(1)))
    func anErrorNotToBeRetriedFailsAtOnce() async throws {
        for error in [AdvisedError.permanent as any Error, UnclassifiedError()] {
            let fixture = RetryFixture([.failure(error)], policy: Self.noJitter)
            await #expect(throws: (any Error).self) { try await fixture.store.requireData() }
            #expect(fixture.origin.callCount == 1)
            #expect(fixture.clock.sleeperCount == 0)
            #expect(fixture.summary == ["miss", "started 1", "failed 1 0ms"])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anOriginCancellingItselfIsNotRetried() async throws {
        let fixture = RetryFixture([.failure(CancellationError())], policy: Self.noJitter)
        await #expect(throws: StoreFlowableError.self) { try await fixture.store.requireData() }
        #expect(fixture.origin.callCount == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func aCancellationIsNeverRetriedEvenWhenTheAdviceSaysSo() async throws {
        let retryEverything = RetryPolicy(
            maxAttempts: 3, baseDelay: .milliseconds(100), jitter: .none, retryAdvice: { _ in .retry })
        let fixture = RetryFixture([.failure(CancellationError())], policy: retryEverything)
        await #expect(throws: StoreFlowableError.self) { try await fixture.store.requireData() }
        #expect(fixture.origin.callCount == 1)
        #expect(fixture.clock.sleeperCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func aServerDelayIsCappedAtTheMaximumDelay() async throws {
        let asking = AdvisedError(retryAdvice: .retryAfter(.seconds(3_600)))
        let policy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1), maxDelay: .seconds(5), jitter: .full)
        let fixture = RetryFixture([.failure(asking), .success("value")], policy: policy)
        let store = fixture.store
        let caller = Task { try await store.requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        fixture.clock.advance(by: .milliseconds(4_999))
        #expect(fixture.origin.callCount == 1)
        fixture.clock.advance(by: .milliseconds(1))
        #expect(try await caller.value == "value")
        #expect(fixture.summary.contains("retry 2 in 5000ms"))
    }

    @Test(.timeLimit(.minutes(1)))
    func anOriginCanForbidTheRetryOfItsAttempt() async throws {
        let attempts = LockedValue<[Int]>([])
        let fixture = RetryFixture([], policy: Self.noJitter) { _ in
            let attempt = FetchAttempt.current
            attempts.withLock { $0.append(attempt?.number ?? 0) }
            if attempt?.number == 2 { attempt?.forbidRetry() }
            return .failure(AdvisedError.transient)
        }
        let store = fixture.store
        let caller = Task { try await store.requireData() }
        await fixture.clock.sleepers(atLeast: 1)
        fixture.clock.advance(by: .milliseconds(100))
        await #expect(throws: AdvisedError.self) { try await caller.value }
        #expect(attempts.withLock { $0 } == [1, 2])
        #expect(FetchAttempt.current == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func withoutARetryPolicyAFetchCallsTheOriginOnce() async throws {
        let origin = ScriptedOrigin<String>([.failure(AdvisedError.transient)])
        let manager = FlowableDataStateManager<Int>()
        let store = TestStoreCallback(key: 1, manager: manager, cache: InMemoryCache<String>(), origin: origin).create()
        await #expect(throws: AdvisedError.self) { try await store.requireData() }
        #expect(origin.callCount == 1)
    }
}
