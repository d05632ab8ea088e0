import StoreFlowableTesting
import Testing

/// An error with a readable description, private to this file.
private struct OriginFailure: Error, Equatable, CustomStringConvertible {
    let name: String
    var description: String { name }
}

@Suite struct ScriptedOriginTests {
    @Test(.timeLimit(.minutes(1)))
    func queuedResultsAreReturnedInOrder() async throws {
        let origin = ScriptedOrigin<Int>([.success(1), .failure(OriginFailure(name: "second")), .success(3)])
        #expect(try await origin.fetch() == 1)
        await #expect(throws: OriginFailure(name: "second")) { try await origin.fetch() }
        #expect(try await origin.fetch() == 3)
        #expect(origin.callCount == 3)
        #expect(origin.pendingResultCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func enqueuedResultsFollowTheInitialOnes() async throws {
        let origin = ScriptedOrigin<String>([.success("initial")])
        origin.enqueue(value: "value")
        origin.enqueue(error: OriginFailure(name: "error"))
        origin.enqueue(.success("result"))
        #expect(origin.pendingResultCount == 4)
        #expect(try await origin.fetch() == "initial")
        #expect(try await origin.fetch() == "value")
        await #expect(throws: OriginFailure(name: "error")) { try await origin.fetch() }
        #expect(try await origin.fetch() == "result")
    }

    @Test(.timeLimit(.minutes(1)))
    func fallbackAnswersWithTheCallNumberOnceTheQueueIsEmpty() async throws {
        let origin = ScriptedOrigin<Int>([.success(10)], otherwise: { .success($0 * 100) })
        #expect(try await origin.fetch() == 10)
        #expect(try await origin.fetch() == 200)
        #expect(try await origin.fetch() == 300)
        origin.enqueue(value: 7)
        #expect(try await origin.fetch() == 7)
        #expect(try await origin.fetch() == 500)
    }

    @Test(.timeLimit(.minutes(1)))
    func emptyQueueWithoutFallbackThrowsExhausted() async throws {
        let origin = ScriptedOrigin<Int>([.success(1)])
        #expect(try await origin.fetch() == 1)
        await #expect(throws: ScriptedOriginError.exhausted(call: 2)) { try await origin.fetch() }
        await #expect(throws: ScriptedOriginError.exhausted(call: 3)) { try await origin.fetch() }
        #expect(origin.callCount == 3)
        #expect(origin.inFlightCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func heldGateParksFetchesUntilRelease() async throws {
        let origin = ScriptedOrigin<Int>([.success(1)])
        origin.hold()
        let fetch = Task { try await origin.fetch() }
        await origin.waitForCalls(1)
        #expect(origin.waitingAtGateCount == 1)
        #expect(origin.inFlightCount == 1)
        #expect(origin.pendingResultCount == 1)
        origin.release()
        #expect(try await fetch.value == 1)
        #expect(origin.inFlightCount == 0)
        #expect(origin.waitingAtGateCount == 0)
        #expect(origin.cancelledCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func releaseThenHoldLetsOnlyTheParkedFetchesThrough() async throws {
        let origin = ScriptedOrigin<Int>(otherwise: { .success($0) })
        origin.hold()
        let first = Task { try await origin.fetch() }
        await origin.waitForCalls(1)
        origin.release()
        origin.hold()
        #expect(try await first.value == 1)
        let second = Task { try await origin.fetch() }
        await origin.waitForCalls(2)
        #expect(origin.waitingAtGateCount == 1)
        origin.release()
        #expect(try await second.value == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellationWhileHeldThrowsAndIsCounted() async throws {
        let origin = ScriptedOrigin<Int>([.success(1)])
        origin.hold()
        let fetch = Task { try await origin.fetch() }
        await origin.waitForCalls(1)
        fetch.cancel()
        await origin.waitForCancellations(1)
        await #expect(throws: CancellationError.self) { try await fetch.value }
        #expect(origin.cancelledCount == 1)
        #expect(origin.sawCancellation)
        #expect(origin.inFlightCount == 0)
        #expect(origin.waitingAtGateCount == 0)
        #expect(origin.pendingResultCount == 1, "a cancelled fetch must not consume a scripted result")
    }

    @Test(.timeLimit(.minutes(1)))
    func alreadyCancelledFetchAtHeldGateThrows() async throws {
        let origin = ScriptedOrigin<Int>([.success(1)])
        origin.hold()
        let fetch = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await origin.fetch()
        }
        await #expect(throws: CancellationError.self) { try await fetch.value }
        #expect(origin.callCount == 1)
        #expect(origin.cancelledCount == 1)
        #expect(origin.waitingAtGateCount == 0, "a cancelled fetch must not stay parked at the gate")
    }

    @Test(.timeLimit(.minutes(1)))
    func cancelledFetchAtOpenGateReturnsItsResultButIsCounted() async throws {
        let origin = ScriptedOrigin<Int>([.success(1)])
        #expect(!origin.sawCancellation)
        let fetch = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await origin.fetch()
        }
        #expect(try await fetch.value == 1)
        #expect(origin.cancelledCount == 1)
        #expect(origin.sawCancellation)
    }

    @Test(.timeLimit(.minutes(1)))
    func maxConcurrentCallsRecordsTheHighWaterMark() async throws {
        let origin = ScriptedOrigin<Int>(otherwise: { .success($0) })
        origin.hold()
        let fetches = (0..<5).map { _ in Task { try await origin.fetch() } }
        await origin.waitForCalls(5)
        #expect(origin.inFlightCount == 5)
        #expect(origin.maxConcurrentCalls == 5)
        origin.release()
        var results: [Int] = []
        for fetch in fetches { results.append(try await fetch.value) }
        #expect(results.sorted() == [1, 2, 3, 4, 5])
        #expect(origin.inFlightCount == 0)
        #expect(origin.maxConcurrentCalls == 5)
        _ = try await origin.fetch()
        #expect(origin.maxConcurrentCalls == 5)
    }

    @Test(.timeLimit(.minutes(1)))
    func manyWaitersWakeWhenConcurrentCallersReachTheirCounts() async throws {
        let origin = ScriptedOrigin<Int>(otherwise: { .success($0) })
        let callers = 200
        await withTaskGroup(of: Void.self) { group in
            for waiter in 0..<400 {
                group.addTask { await origin.waitForCalls(waiter % callers + 1) }
            }
            for _ in 0..<callers {
                group.addTask { _ = try? await origin.fetch() }
            }
        }
        #expect(origin.callCount == callers)
        #expect(origin.inFlightCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func waitsReturnAtOnceWhenAlreadySatisfied() async throws {
        let origin = ScriptedOrigin<Int>([.success(1)])
        await origin.waitForCalls(0)
        await origin.waitForCancellations(0)
        _ = try await origin.fetch()
        await origin.waitForCalls(1)
        #expect(origin.callCount == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func cancelledWaitReturnsEarly() async {
        let origin = ScriptedOrigin<Int>()
        let waiter = Task { await origin.waitForCalls(1) }
        waiter.cancel()
        await waiter.value
        #expect(origin.callCount == 0)
    }
}
