import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// A flight runner that runs nothing, for driving the manager's events by hand.
private struct IdleRunner: FlightRunner {
    func runFlight(_ id: UInt64) async {}
    func runPageFlight(_ direction: PageDirection, _ id: UInt64, startVersion: UInt64) async {}
    func hasPassed(_ deadline: CacheTime) -> Bool { false }
}

/// The manager's own promises: late events meant for a released key state never touch the key's next
/// state, and emissions reach a stream in the order the manager decided them.
@Suite(.timeLimit(.minutes(1)))
struct FlowableDataStateManagerTests {
    @Test func aLateLeaveForAReleasedStateCannotRemoveANewWaiter() async throws {
        let manager = FlowableDataStateManager<String>()
        let first = OneShot<ErasedData>()
        let (firstID, _, joined) = await manager.join("key", String.self, first)
        let flight = try #require(joined.flightToStart?.id)
        let (decision, _) = await manager.flightReturned(
            "key", String.self, flight: flight, writer: OneShot<Bool>())
        #expect(decision == .write)
        await manager.flightSaved("key", flight: flight, data: "value").run(for: IdleRunner())
        #expect(await manager.trackedKeyCount == 0)  // released: the next join creates a new state

        let second = OneShot<ErasedData>()
        let (secondID, _, _) = await manager.join("key", String.self, second)
        #expect(secondID != firstID)
        // The first caller's `leave` arrives late, after its waiter was resolved and the state released.
        _ = await manager.leave("key", String.self, waiter: firstID)
        #expect(await manager.registryCounts(for: "key", String.self).waiters == 1)
        #expect(await manager.dataState(for: "key", of: String.self).isLoading)
    }

    @Test func aLateFirstReadOfAReleasedStreamCannotBecomeANewStreamsState() async throws {
        let manager = FlowableDataStateManager<String>()
        let (oldStream, oldContinuation) = AsyncStream.makeStream(of: LoadingState<String>.self)
        _ = oldStream
        let (old, _) = await manager.subscribe(
            "key", String.self, DirectSubscription(oldContinuation))
        let (oldID, oldVersion) = try #require(old)
        _ = await manager.unsubscribe("key", String.self, subscriber: oldID)
        #expect(await manager.trackedKeyCount == 0)

        let (newStream, newContinuation) = AsyncStream.makeStream(of: LoadingState<String>.self)
        let (new, _) = await manager.subscribe(
            "key", String.self, DirectSubscription(newContinuation))
        let (newID, _) = try #require(new)
        #expect(newID != oldID)
        let late = await manager.initialRead(
            "key", subscriber: oldID, version: oldVersion, cached: "stale", isValid: true, forceRefresh: false)
        #expect(late.action.isEmpty)
        newContinuation.finish()
        var received: [String] = []
        for await state in newStream { received.append(state.description) }
        #expect(received.isEmpty)
    }

    @Test func anOlderEmissionRunAfterANewerOneIsDropped() async throws {
        let manager = FlowableDataStateManager<String>()
        let (stream, continuation) = AsyncStream.makeStream(of: LoadingState<String>.self)
        let recorder = StateRecorder(stream)
        let (registered, _) = await manager.subscribe(
            "key", String.self, DirectSubscription(continuation))
        let (id, version) = try #require(registered)
        await manager.initialRead(
            "key", subscriber: id, version: version, cached: "v0", isValid: true, forceRefresh: false
        )
        .run(for: IdleRunner())
        try await recorder.waitForLatest { $0.content == "v0" }

        // Two updates decided in order v1, v2, whose effects run in the opposite order.
        let first = await manager.beginUpdate("key", OneShot<Bool>(), String.self)
        let v1 = await manager.finishUpdate("key", update: first.id, newData: "v1", error: nil)
        let second = await manager.beginUpdate("key", OneShot<Bool>(), String.self)
        let v2 = await manager.finishUpdate("key", update: second.id, newData: "v2", error: nil)
        v2.run(for: IdleRunner())
        v1.run(for: IdleRunner())
        try await recorder.waitForLatest { $0.content == "v2" }
        continuation.finish()
        await recorder.finished()
        #expect(recorder.snapshots == [.completed("v0"), .completed("v2")])
    }

    @Test func subscriptionsDeliverOnlyNewerSequences() async {
        let (stream, continuation) = AsyncStream.makeStream(of: LoadingState<Int>.self)
        let subscription = DirectSubscription(continuation)
        subscription.deliver(.completed(2 as ErasedData), sequence: 2)
        subscription.deliver(.completed(1 as ErasedData), sequence: 1)
        subscription.deliver(.completed(2 as ErasedData), sequence: 2)
        subscription.deliver(.completed(3 as ErasedData), sequence: 3)
        continuation.finish()
        var received: [Int?] = []
        for await state in stream { received.append(state.content) }
        #expect(received == [2, 3])
    }
}
