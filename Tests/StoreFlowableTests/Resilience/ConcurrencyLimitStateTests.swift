import Testing

@testable import StoreFlowable

/// The transitions of the pure permit machine behind ``ConcurrencyLimit``, with strings as waiters.
@Suite("ConcurrencyLimitState")
struct ConcurrencyLimitStateTests {
    private typealias State = ConcurrencyLimitState<String>

    /// Queues `id` and attaches `waiter` to it, expecting both to wait.
    private func enqueue(_ state: inout State, id: UInt64, waiter: String) {
        #expect(state.acquire(id: id) == .queued)
        #expect(state.attach(waiter, to: id) == .waiting)
    }

    @Test("Callers take free permits at once, up to the limit")
    func grant() {
        var state = State(limit: 2)
        #expect(state.acquire(id: 1) == .granted)
        #expect(state.acquire(id: 2) == .granted)
        #expect(state.running == 2)
        #expect(state.queuedCount == 0)
    }

    @Test("A caller beyond the limit is queued")
    func queue() {
        var state = State(limit: 1)
        #expect(state.acquire(id: 1) == .granted)
        #expect(state.acquire(id: 2) == .queued)
        #expect(state.running == 1)
        #expect(state.queuedCount == 1)
    }

    @Test("Released permits go to queued callers in arrival order")
    func fifo() {
        var state = State(limit: 1)
        #expect(state.acquire(id: 1) == .granted)
        for (id, waiter) in [(2, "b"), (3, "c"), (4, "d")] {
            enqueue(&state, id: UInt64(id), waiter: waiter)
        }
        #expect(state.release() == "b")
        #expect(state.release() == "c")
        #expect(state.release() == "d")
        #expect(state.running == 1)
        #expect(state.release() == nil)
        #expect(state.running == 0)
        #expect(state.queuedCount == 0)
    }

    @Test("A release hands its permit on when someone waits, and frees it otherwise")
    func releaseHandsOn() {
        var state = State(limit: 2)
        #expect(state.acquire(id: 1) == .granted)
        #expect(state.acquire(id: 2) == .granted)
        enqueue(&state, id: 3, waiter: "c")
        #expect(state.release() == "c")
        #expect(state.running == 2)
        #expect(state.queuedCount == 0)
        #expect(state.release() == nil)
        #expect(state.running == 1)
        #expect(state.acquire(id: 4) == .granted)
        #expect(state.running == 2)
    }

    @Test("A newcomer never overtakes a waiter, even when a permit is about to be handed on")
    func noOvertaking() {
        var state = State(limit: 1)
        #expect(state.acquire(id: 1) == .granted)
        enqueue(&state, id: 2, waiter: "b")
        #expect(state.release() == "b")
        // The permit went to "b": a newcomer queues.
        #expect(state.acquire(id: 3) == .queued)
        #expect(state.running == 1)
    }

    @Test("An abandoned queued caller is removed and returned for its cancellation; the others keep order")
    func abandonQueued() {
        var state = State(limit: 1)
        #expect(state.acquire(id: 1) == .granted)
        enqueue(&state, id: 2, waiter: "b")
        enqueue(&state, id: 3, waiter: "c")
        enqueue(&state, id: 4, waiter: "d")
        #expect(state.abandon(id: 3) == .removed("c"))
        #expect(state.queuedCount == 2)
        #expect(state.abandon(id: 3) == .notQueued)
        #expect(state.release() == "b")
        #expect(state.release() == "d")
        #expect(state.release() == nil)
        #expect(state.running == 0)
    }

    @Test("Abandoning a caller already handed the permit changes nothing; its release hands the permit on")
    func abandonAfterGrant() {
        var state = State(limit: 1)
        #expect(state.acquire(id: 1) == .granted)
        enqueue(&state, id: 2, waiter: "b")
        enqueue(&state, id: 3, waiter: "c")
        #expect(state.release() == "b")
        #expect(state.abandon(id: 2) == .notQueued)
        #expect(state.running == 1)
        #expect(state.queuedCount == 1)
        // "b" passes the permit on.
        #expect(state.release() == "c")
        #expect(state.running == 1)
        #expect(state.release() == nil)
        #expect(state.running == 0)
    }

    @Test("A caller queued but not yet attached can be handed the permit; attaching then says so")
    func grantedBeforeAttach() {
        var state = State(limit: 1)
        #expect(state.acquire(id: 1) == .granted)
        #expect(state.acquire(id: 2) == .queued)
        #expect(state.release() == nil)
        #expect(state.running == 1)
        #expect(state.queuedCount == 0)
        #expect(state.abandon(id: 2) == .notQueued)
        #expect(state.attach("b", to: 2) == .granted)
        #expect(state.release() == nil)
        #expect(state.running == 0)
    }

    @Test("A caller abandoned before attaching is told so when it attaches, and holds no permit")
    func abandonedBeforeAttach() {
        var state = State(limit: 1)
        #expect(state.acquire(id: 1) == .granted)
        #expect(state.acquire(id: 2) == .queued)
        #expect(state.abandon(id: 2) == .removed(nil))
        #expect(state.attach("b", to: 2) == .abandoned)
        #expect(state.queuedCount == 0)
        #expect(state.release() == nil)
        #expect(state.running == 0)
    }

    @Test("Limits below 1 count as 1", arguments: [0, -1, Int.min])
    func limitClamp(limit: Int) {
        var state = State(limit: limit)
        #expect(state.limit == 1)
        #expect(state.acquire(id: 1) == .granted)
        #expect(state.acquire(id: 2) == .queued)
    }

    @Test("The queue's storage stays bounded while callers keep arriving and leaving")
    func boundedStorage() {
        var state = State(limit: 1)
        #expect(state.acquire(id: 0) == .granted)
        // One caller waits all along, so the queue never empties; others come and abandon.
        enqueue(&state, id: 1, waiter: "first")
        var id: UInt64 = 2
        for round in 0..<10_000 {
            enqueue(&state, id: id, waiter: "w\(round)")
            #expect(state.abandon(id: id) == .removed("w\(round)"))
            id += 1
            #expect(state.storedIDCount <= 2 * state.queuedCount + 17)
        }
        // Callers also go through the queue and are handed permits, the queue never empty.
        for round in 0..<10_000 {
            enqueue(&state, id: id, waiter: "v\(round)")
            id += 1
            #expect(state.release() != nil)
            #expect(state.storedIDCount <= 2 * state.queuedCount + 17)
        }
        #expect(state.queuedCount == 1)
        #expect(state.release() == "v9999")
        #expect(state.release() == nil)
        #expect(state.storedIDCount == 0)
        #expect(state.running == 0)
    }
}
