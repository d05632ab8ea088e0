/// The bookkeeping of a ``BatchedOrigin``: the batch that is collecting keys, the batches whose origin
/// call runs, and the callers waiting in each, with no tasks, clocks or locks.
///
/// Every transition is a pure change of this value that returns the ``Effects`` its owner performs
/// afterwards, outside its lock (starting a window timer, cancelling a timer or an origin call,
/// dispatching a batch), so the rules can be tested without running anything.
///
/// - A caller joins the pending batch, which the first key starts (with a window timer), never a
///   dispatched one: every caller's value is read by an origin call that begins after the caller
///   arrived. (A dispatched batch may have asked the origin before a write the caller follows: a store
///   that `update`s a key and then fetches it again must not get the older value back.)
/// - The pending batch is dispatched when its window ends, or at once when it holds `maxBatchSize`
///   distinct keys; a key whose callers all left is dropped from it first, and a pending batch left
///   empty is discarded with its timer.
/// - A dispatched batch stays until its origin call ends (``finish(batch:)``), or until every caller of
///   every key in it has left, when it is discarded and its origin call cancelled.
///
/// `Waiter` is what a caller waits on (a `OneShot` in ``BatchedOrigin``) and `Handle` a timer's or an
/// origin call's cancel switch (a `FlightHandle`); tests use plain values for both.
struct BatchState<Key: Hashable & Sendable, Waiter: Sendable, Handle: Sendable>: Sendable {
    /// What the owner does after a transition, outside its lock, in this order: ``cancel``, then
    /// ``startWindow``, then ``dispatch``.
    struct Effects: Sendable {
        /// A window timer or an origin call to cancel (its batch was discarded or dispatched by size).
        var cancel: Handle?
        /// A window timer to start for the new pending batch `batch`; when it ends, the owner calls
        /// ``windowEnded(batch:makeHandle:)``.
        var startWindow: (timer: Handle, batch: Int)?
        /// A batch to send to the origin: start `flight` calling it with `keys` (distinct, in the order
        /// they arrived), then call ``finish(batch:)`` with the batch's number when it ends.
        var dispatch: (flight: Handle, batch: Int, keys: [Key])?

        /// Nothing to do.
        static var none: Effects { Effects() }
    }

    /// The callers of one key in one batch.
    struct Entry: Sendable {
        /// When the key joined the batch, to keep the keys in arrival order.
        let arrival: Int
        /// The callers waiting for the key, by caller number.
        var waiters: [Int: Waiter] = [:]
    }

    /// One batch, pending or dispatched.
    struct Batch: Sendable {
        /// The batch's number.
        let id: Int
        /// The batch's keys and their callers. In a dispatched batch a key may have no callers left.
        var entries: [Key: Entry] = [:]
        /// How many callers wait in the batch, all keys together.
        var waiterCount = 0
        /// The window timer of a pending batch; `nil` once dispatched, or when never started.
        var timer: Handle?
        /// The origin call of a dispatched batch.
        var flight: Handle?

        init(id: Int, timer: Handle?) {
            self.id = id
            self.timer = timer
        }
    }

    /// The most distinct keys in one batch (at least 1).
    let maxBatchSize: Int
    /// The batch collecting keys, if any.
    private(set) var pending: Batch?
    /// The dispatched batches whose outcome someone still waits for, by number.
    private(set) var running: [Int: Batch] = [:]
    /// Where each waiting caller is: its key and its batch's number.
    private var callers: [Int: (key: Key, batch: Int)] = [:]
    private var nextCaller = 0
    private var nextBatch = 0
    private var nextArrival = 0

    /// Creates an empty state.
    ///
    /// - Parameter maxBatchSize: The most distinct keys in one batch; values below 1 count as 1.
    init(maxBatchSize: Int) {
        self.maxBatchSize = max(1, maxBatchSize)
    }

    /// How many distinct keys the pending batch holds.
    var pendingKeyCount: Int { pending?.entries.count ?? 0 }
    /// How many dispatched batches someone still waits for.
    var runningBatchCount: Int { running.count }
    /// How many callers wait, in the pending batch and in the dispatched ones.
    var callerCount: Int { callers.count }

    /// A caller of `key` arrives: it joins the pending batch (starting one, with its window timer, when
    /// none collects keys), also when a dispatched batch asks for `key`: that call may have read the
    /// origin before the caller arrived. A pending batch that reaches ``maxBatchSize`` distinct keys is
    /// dispatched at once.
    ///
    /// - Parameters:
    ///   - key: The key the caller wants.
    ///   - waiter: What the caller waits on; ``finish(batch:)`` returns it with the key's callers.
    ///   - makeHandle: Makes a timer's or an origin call's handle; called only when one is needed.
    /// - Returns: The caller's number, for ``leave(caller:)``, and what to do.
    mutating func enqueue(_ key: Key, waiter: Waiter, makeHandle: () -> Handle) -> (caller: Int, effects: Effects) {
        let caller = nextCaller
        nextCaller += 1
        var effects = Effects.none
        var batch: Batch
        if let current = pending {
            batch = current
        } else {
            let id = nextBatch
            nextBatch += 1
            // A batch of one key is dispatched as soon as it starts: it needs no timer.
            let timer = maxBatchSize > 1 ? makeHandle() : nil
            batch = Batch(id: id, timer: timer)
            if let timer { effects.startWindow = (timer, id) }
        }
        if batch.entries[key] == nil {
            batch.entries[key] = Entry(arrival: nextArrival)
            nextArrival += 1
        }
        batch.entries[key]?.waiters[caller] = waiter
        batch.waiterCount += 1
        callers[caller] = (key, batch.id)
        pending = batch
        if batch.entries.count >= maxBatchSize {
            // A new batch has no timer here (it is full with one key only when `maxBatchSize` is 1).
            effects.cancel = batch.timer
            effects.dispatch = dispatchPending(makeHandle: makeHandle)
        }
        return (caller, effects)
    }

    /// The window timer of batch `batch` ended: dispatches it if it is still the pending batch (it may
    /// have been dispatched by size or discarded meanwhile).
    ///
    /// - Parameters:
    ///   - batch: The batch whose timer ended.
    ///   - makeHandle: Makes the origin call's handle.
    /// - Returns: The dispatch to perform, if any.
    mutating func windowEnded(batch: Int, makeHandle: () -> Handle) -> Effects {
        guard pending?.id == batch else { return .none }
        var effects = Effects.none
        effects.dispatch = dispatchPending(makeHandle: makeHandle)
        return effects
    }

    /// Caller `caller` leaves (it was cancelled). In the pending batch, a key with no callers left is
    /// dropped, and a batch with no keys left is discarded and its timer cancelled. In a dispatched
    /// batch, the key stays, but a batch with no callers left at all is discarded and its origin call
    /// cancelled. A caller already served or gone changes nothing.
    ///
    /// - Parameter caller: The number ``enqueue(_:waiter:makeHandle:)`` returned.
    /// - Returns: What to cancel, if anything.
    mutating func leave(caller: Int) -> Effects {
        guard let (key, id) = callers.removeValue(forKey: caller) else { return .none }
        var effects = Effects.none
        if var batch = pending, batch.id == id {
            batch.entries[key]?.waiters[caller] = nil
            batch.waiterCount -= 1
            if batch.entries[key]?.waiters.isEmpty == true { batch.entries[key] = nil }
            if batch.entries.isEmpty {
                pending = nil
                effects.cancel = batch.timer
            } else {
                pending = batch
            }
        } else if var batch = running[id] {
            batch.entries[key]?.waiters[caller] = nil
            batch.waiterCount -= 1
            if batch.waiterCount == 0 {
                discardRunning(batch)
                effects.cancel = batch.flight
            } else {
                running[id] = batch
            }
        }
        return effects
    }

    /// The origin call of batch `batch` ended: removes the batch and returns its callers, by key, to
    /// hand the outcome to. A batch discarded meanwhile returns nothing.
    ///
    /// - Parameter batch: The batch's number, from ``Effects/dispatch``.
    /// - Returns: Every key of the batch that still has callers, with those callers.
    mutating func finish(batch: Int) -> [(key: Key, waiters: [Waiter])] {
        guard let finished = running[batch] else { return [] }
        discardRunning(finished)
        var served: [(key: Key, waiters: [Waiter])] = []
        for (key, entry) in finished.entries where !entry.waiters.isEmpty {
            for caller in entry.waiters.keys { callers[caller] = nil }
            served.append((key, Array(entry.waiters.values)))
        }
        return served
    }

    /// Moves the pending batch to the running ones and returns its dispatch.
    private mutating func dispatchPending(makeHandle: () -> Handle) -> (flight: Handle, batch: Int, keys: [Key])? {
        guard var batch = pending else { return nil }
        pending = nil
        let flight = makeHandle()
        batch.timer = nil
        batch.flight = flight
        let keys = batch.entries.sorted { $0.value.arrival < $1.value.arrival }.map(\.key)
        running[batch.id] = batch
        return (flight, batch.id, keys)
    }

    /// Forgets a dispatched batch.
    private mutating func discardRunning(_ batch: Batch) {
        running[batch.id] = nil
    }
}
