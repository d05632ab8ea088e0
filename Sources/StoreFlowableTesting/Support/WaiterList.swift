import StoreFlowable

/// The continuations of suspended tasks, each stored with the condition it waits for under an id of
/// its own, so that a cancelled task can withdraw exactly its own continuation.
///
/// A plain value kept inside a double's ``LockedValue``: it never resumes anything itself. Methods
/// that remove continuations return them so the caller can resume them after releasing the lock.
///
/// Locking, the rule every lock of the doubles follows: each double keeps its state and its waiter
/// lists inside one ``LockedValue`` and, while holding it, only reads and updates that state. It never
/// resumes a continuation, yields into a stream, creates or cancels a task, reads `Task.isCancelled`,
/// registers a cancellation handler, calls a closure a test supplied, or drops the last reference to
/// a value a test supplied (``LockedValue/replace(_:with:)`` hands a replaced one out to be released
/// after unlocking). So the cancellation handlers of `park`, which run with the cancelled task's
/// status-record lock held, may take the lock: nothing holds it while waiting for a status-record
/// lock. Removing an entry drops its condition under the lock, but never the last reference to it:
/// the parked task keeps its own until it is resumed.
struct WaiterList<Condition: Sendable, Output: Sendable>: Sendable {
    /// The continuation of one suspended task.
    typealias Continuation = CheckedContinuation<Output, Never>

    /// One suspended task: what it waits for and how to wake it.
    private struct Entry: Sendable {
        let condition: Condition
        let continuation: Continuation
    }

    private var lastID: UInt64 = 0
    private var entries: [UInt64: Entry] = [:]

    /// The number of suspended tasks in the list.
    var count: Int { entries.count }

    /// Returns an id no other waiter of this list has had.
    mutating func reserveID() -> UInt64 {
        lastID += 1
        return lastID
    }

    /// Stores a suspended task's continuation under the id it reserved.
    mutating func insert(id: UInt64, condition: Condition, continuation: Continuation) {
        entries[id] = Entry(condition: condition, continuation: continuation)
    }

    /// Removes and returns the continuation stored under `id`, or `nil` if it was already removed.
    mutating func remove(id: UInt64) -> Continuation? {
        entries.removeValue(forKey: id)?.continuation
    }

    /// The conditions of every waiter with its id, in the order the waiters arrived.
    var conditions: [(id: UInt64, condition: Condition)] {
        entries.sorted { $0.key < $1.key }.map { (id: $0.key, condition: $0.value.condition) }
    }

    /// Removes and returns the continuations whose condition satisfies `isReady`, in arrival order.
    mutating func removeAll(where isReady: (Condition) -> Bool) -> [Continuation] {
        let ready = entries.filter { isReady($0.value.condition) }.keys.sorted()
        return ready.compactMap { entries.removeValue(forKey: $0)?.continuation }
    }

    /// Removes and returns every continuation, in arrival order.
    mutating func removeAll() -> [Continuation] {
        removeAll { _ in true }
    }
}

extension WaiterList where Condition == Int, Output == Void {
    /// Removes and returns the continuations of tasks waiting for a count of at most `count`.
    mutating func removeReached(_ count: Int) -> [Continuation] {
        removeAll { $0 <= count }
    }
}

extension LockedValue {
    /// Suspends the calling task in the waiter list at `list` until someone resumes it, or returns at
    /// once with what `arrive` returns.
    ///
    /// `arrive` runs exactly once, under the lock, before the task parks: it may update the state and
    /// returns the output to finish with at once, or `nil` to park. It must only compute: it runs under
    /// the lock (see "Locking" at ``WaiterList``). `afterArriving` then runs exactly once on the
    /// calling task after the lock is released and before the task suspends, so whatever it resumes
    /// observes this task already parked. With a `cancelledOutput`, a task that is cancelled before or
    /// while it is parked withdraws its continuation and returns `cancelledOutput`; without one, the
    /// task ignores cancellation and stays parked until resumed.
    func park<Condition, Output>(
        in list: any WritableKeyPath<Value, WaiterList<Condition, Output>> & Sendable,
        condition: Condition,
        ifCancelled cancelledOutput: Output? = nil,
        arrive: (inout Value) -> Output?,
        afterArriving: () -> Void = {}
    ) async -> Output {
        let id = withLock { $0[keyPath: list].reserveID() }
        guard let cancelledOutput else {
            return await withCheckedContinuation { continuation in
                arriveOrPark(continuation, id: id, in: list, condition: condition, arrive: arrive)
                afterArriving()
            }
        }
        // The cancellation handler runs with the task's status-record lock held, so it only takes this
        // lock, which is never held across anything that takes a status-record lock, and resumes after
        // unlocking. A cancellation before the continuation is stored runs the handler too early to
        // find it; the check after storing catches that case, because the task's flag is set before
        // its handler runs. Whichever of the two withdraws the continuation resumes it: exactly once.
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if arriveOrPark(continuation, id: id, in: list, condition: condition, arrive: arrive),
                    Task.isCancelled
                {
                    withdraw(id, from: list, resuming: cancelledOutput)
                }
                afterArriving()
            }
        } onCancel: {
            self.withdraw(id, from: list, resuming: cancelledOutput)
        }
    }

    /// Runs `arrive` under the lock and then either resumes `continuation` at once (after unlocking)
    /// or stores it in the list at `list`.
    ///
    /// - Returns: Whether the continuation was stored.
    @discardableResult
    private func arriveOrPark<Condition, Output>(
        _ continuation: WaiterList<Condition, Output>.Continuation,
        id: UInt64,
        in list: any WritableKeyPath<Value, WaiterList<Condition, Output>> & Sendable,
        condition: Condition,
        arrive: (inout Value) -> Output?
    ) -> Bool {
        let immediate: Output? = withLock { state in
            if let output = arrive(&state) { return output }
            state[keyPath: list].insert(id: id, condition: condition, continuation: continuation)
            return nil
        }
        guard let immediate else { return true }
        continuation.resume(returning: immediate)
        return false
    }

    /// Removes the continuation stored under `id` from the list at `list`, if it is still there, and
    /// resumes it with `output` after unlocking.
    private func withdraw<Condition, Output>(
        _ id: UInt64,
        from list: any WritableKeyPath<Value, WaiterList<Condition, Output>> & Sendable,
        resuming output: Output
    ) {
        let withdrawn = withLock { $0[keyPath: list].remove(id: id) }
        withdrawn?.resume(returning: output)
    }
}
