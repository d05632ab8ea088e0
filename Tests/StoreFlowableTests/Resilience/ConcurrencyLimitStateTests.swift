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

    @Test("A caller that finds every permit taken and the queue full is refused and changes nothing")
    func refusedWhenTheQueueIsFull() {
        var state = State(limit: 1, maxQueued: 2)
        #expect(state.acquire(id: 1) == .granted)
        enqueue(&state, id: 2, waiter: "b")
        enqueue(&state, id: 3, waiter: "c")
        #expect(state.acquire(id: 4) == .refused)
        #expect(state.queuedCount == 2)
        #expect(state.running == 1)
        // The refused caller was never queued: it is unknown to attach and abandon.
        #expect(state.attach("d", to: 4) == .abandoned)
        #expect(state.abandon(id: 4) == .notQueued)
        // A queued caller leaving makes room for exactly one more.
        #expect(state.abandon(id: 2) == .removed("b"))
        enqueue(&state, id: 5, waiter: "e")
        #expect(state.acquire(id: 6) == .refused)
        // Handing a permit on makes room too, and the order is kept.
        #expect(state.release() == "c")
        enqueue(&state, id: 7, waiter: "g")
        #expect(state.release() == "e")
        #expect(state.release() == "g")
        #expect(state.release() == nil)
        #expect(state.running == 0)
        #expect(state.queuedCount == 0)
    }

    @Test("A full queue never refuses a caller that finds a free permit")
    func aFreePermitIsAlwaysGranted() {
        var state = State(limit: 2, maxQueued: 0)
        #expect(state.acquire(id: 1) == .granted)
        #expect(state.acquire(id: 2) == .granted)
        #expect(state.acquire(id: 3) == .refused)
        #expect(state.release() == nil)
        #expect(state.acquire(id: 4) == .granted)
        #expect(state.running == 2)
        #expect(state.queuedCount == 0)
    }

    @Test("Queue bounds below 0 count as 0; no bound queues everyone", arguments: [-1, Int.min])
    func queueBoundClamp(maxQueued: Int) {
        var state = State(limit: 1, maxQueued: maxQueued)
        #expect(state.maxQueued == 0)
        #expect(state.acquire(id: 1) == .granted)
        #expect(state.acquire(id: 2) == .refused)

        var unbounded = State(limit: 1)
        #expect(unbounded.maxQueued == nil)
        #expect(unbounded.acquire(id: 1) == .granted)
        for id in 2...1_000 { #expect(unbounded.acquire(id: UInt64(id)) == .queued) }
        #expect(unbounded.queuedCount == 999)
    }

    @Test("A random walk of arrivals, attaches, cancellations and releases keeps the queue within its bound")
    func randomWalkKeepsTheBound() {
        var random = SplitMix64(seed: 0xB0B)
        for maxQueued in [0, 1, 3, 8] {
            var state = State(limit: 2, maxQueued: maxQueued)
            var nextID: UInt64 = 0
            var holders = 0  // Callers holding a permit (granted, or handed one and attached).
            var queued: [UInt64] = []  // Queued ids, oldest first (attached at once).
            for _ in 0..<5_000 {
                switch random.next() % 3 {
                case 0:
                    let id = nextID
                    nextID += 1
                    switch state.acquire(id: id) {
                    case .granted: holders += 1
                    case .queued:
                        #expect(state.attach("\(id)", to: id) == .waiting)
                        queued.append(id)
                    case .refused:
                        #expect(queued.count == maxQueued)
                        #expect(holders == 2)
                    }
                case 1 where !queued.isEmpty:
                    let index = Int(random.next() % UInt64(queued.count))
                    let id = queued.remove(at: index)
                    #expect(state.abandon(id: id) == .removed("\(id)"))
                case _ where holders > 0:
                    if let handedTo = state.release() {
                        #expect(handedTo == "\(queued.removeFirst())")
                    } else {
                        holders -= 1
                    }
                default: break
                }
                #expect(state.queuedCount == queued.count)
                #expect(state.queuedCount <= maxQueued)
                #expect(state.running == holders)
            }
        }
    }
}
