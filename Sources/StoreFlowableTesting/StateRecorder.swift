public import StoreFlowable

/// Collects the states of a `publish()` stream on a task of its own and lets a test wait until they
/// satisfy a predicate.
///
/// ```swift
/// let recorder = StateRecorder(store.publish())
/// try await recorder.waitForLatest { if case .completed = $0 { true } else { false } }
/// #expect(recorder.snapshots == [.loading(nil), .completed("fresh")])
/// recorder.cancel()
/// ```
///
/// Promises:
/// - ``states``, ``latest`` and every other member may be used from any task, concurrently.
/// - The waiting methods re-check their predicate on every new state, without polling; they return at
///   once when the predicate already holds, and their timeout is only a safety net.
/// - A wait that times out, is cancelled, or outlives the stream leaves nothing registered behind.
/// - The recorder consumes the stream until ``cancel()`` or until it is deinitialised, whichever comes
///   first; cancelling ends the stream, which releases the store's subscription.
public final class StateRecorder<Value: Sendable>: Sendable {
    /// What wakes a waiting task.
    enum Wake: Sendable {
        /// The predicate holds for these states.
        case satisfied([LoadingState<Value>])
        /// A state arrived or the stream finished since the waiter last checked; check again.
        case changed
        /// The waiting task was cancelled.
        case cancelled
    }

    /// A waiter's predicate over all states seen.
    typealias Predicate = @Sendable ([LoadingState<Value>]) -> Bool

    /// The states seen, whether the stream finished, and the waiters, guarded by one lock.
    struct State: Sendable {
        var states: [LoadingState<Value>] = []
        var finished = false
        var waiters = WaiterList<Predicate, Wake>()
    }

    /// Guards ``State``, following the rule at ``WaiterList``: held only to read and update it, never
    /// while running a predicate (user code), resuming a waiter or touching a task; the consumer task is
    /// created and cancelled outside it, and the waiting methods' cancellation handlers take it.
    private let storage: LockedValue<State>
    private let consumer: Task<Void, Never>
    private let clock: any Clock<Duration>

    /// Starts consuming `stream` on a new task.
    ///
    /// - Parameters:
    ///   - stream: The stream to record, usually a store's `publish()`.
    ///   - clock: The clock that measures the waiting methods' timeouts.
    public init(_ stream: AsyncStream<LoadingState<Value>>, clock: any Clock<Duration> = ContinuousClock()) {
        let storage = LockedValue(State())
        self.storage = storage
        self.clock = clock
        consumer = Task { await Self.consume(stream, into: storage) }
    }

    deinit {
        consumer.cancel()
    }

    // MARK: Reading

    /// Every state received so far, oldest first.
    public var states: [LoadingState<Value>] {
        storage.withLock { $0.states }
    }

    /// The last state received, or `nil` before the first one.
    public var latest: LoadingState<Value>? {
        storage.withLock { $0.states.last }
    }

    /// The number of waiting calls suspended right now.
    public var pendingWaitCount: Int {
        storage.withLock { $0.waiters.count }
    }

    // MARK: Waiting

    /// Waits until the states received so far satisfy `predicate`.
    ///
    /// The predicate is checked at once and then after every new state, with all states seen so far;
    /// it may run on the recorder's task and must not block.
    ///
    /// - Parameters:
    ///   - timeout: How long to wait at most, measured on the recorder's clock: 30 s by default, so that
    ///     a whole suite run in parallel under ThreadSanitizer on a busy machine (which starves a test
    ///     of the processor for seconds) does not fail, while a state that never comes still fails well
    ///     inside a one-minute `.timeLimit`.
    ///   - predicate: The condition on all states seen, oldest first.
    /// - Returns: The states for which `predicate` returned `true`.
    /// - Throws: ``StateRecorderError`` with ``StateRecorderError/Reason/timedOut(after:)`` when the
    ///   timeout passes, or ``StateRecorderError/Reason/streamFinished`` when the stream ends first;
    ///   `CancellationError` when the calling task is cancelled.
    @discardableResult
    public func waitUntil(
        timeout: Duration = .seconds(30),
        _ predicate: @escaping @Sendable ([LoadingState<Value>]) -> Bool
    ) async throws -> [LoadingState<Value>] {
        let clock = clock
        return try await withThrowingTaskGroup(of: [LoadingState<Value>].self) { group in
            group.addTask { try await self.waitWithoutTimeout(predicate) }
            group.addTask {
                // A safety net for a state that never comes, not a way to synchronise.
                try await clock.sleep(for: timeout)
                throw StateRecorderError(reason: .timedOut(after: timeout), states: self.describedStates)
            }
            defer { group.cancelAll() }
            guard let states = try await group.next() else { throw CancellationError() }
            return states
        }
    }

    /// Waits until the latest state satisfies `predicate`.
    ///
    /// - Parameters:
    ///   - timeout: How long to wait at most, measured on the recorder's clock.
    ///   - predicate: The condition on the latest state.
    /// - Returns: The latest state, which satisfies `predicate`.
    /// - Throws: The errors of ``waitUntil(timeout:_:)``.
    @discardableResult
    public func waitForLatest(
        timeout: Duration = .seconds(30),
        _ predicate: @escaping @Sendable (LoadingState<Value>) -> Bool
    ) async throws -> LoadingState<Value> {
        let states = try await waitUntil(timeout: timeout) { states in
            states.last.map(predicate) ?? false
        }
        guard let latest = states.last else {
            preconditionFailure("waitUntil returned states its predicate rejects: the predicate needs a last state")
        }
        return latest
    }

    /// Waits, without a timeout, until the states satisfy `predicate`.
    private func waitWithoutTimeout(_ predicate: @escaping Predicate) async throws -> [LoadingState<Value>] {
        while true {
            let (seen, finished) = storage.withLock { ($0.states, $0.finished) }
            // The predicate is user code: it runs outside the lock, so it may read the recorder.
            if predicate(seen) { return seen }
            if finished {
                throw StateRecorderError(reason: .streamFinished, states: seen.map(\.recorderDescription))
            }
            let wake = await storage.park(
                in: \.waiters, condition: predicate, ifCancelled: .cancelled,
                arrive: { state in
                    // Something changed since `seen` was taken: check again rather than wait.
                    state.states.count != seen.count || state.finished ? .changed : nil
                })
            switch wake {
            case .satisfied(let states): return states
            case .changed: continue
            case .cancelled: throw CancellationError()
            }
        }
    }

    // MARK: Stopping

    /// Stops consuming: cancels the recorder's task, which ends the stream and wakes the waiting
    /// calls with ``StateRecorderError/Reason/streamFinished``.
    ///
    /// The states received so far stay readable. Await ``finished()`` to know the task has ended.
    public func cancel() {
        consumer.cancel()
    }

    /// Waits until the recorder's task has ended, after ``cancel()`` or because the stream finished.
    public func finished() async {
        await consumer.value
    }

    // MARK: Consuming

    /// The states seen so far, described for an error message.
    private var describedStates: [String] {
        states.map(\.recorderDescription)
    }

    /// Records every element of `stream`, then wakes every waiter so it can see the stream ended.
    private static func consume(_ stream: AsyncStream<LoadingState<Value>>, into storage: LockedValue<State>) async {
        for await state in stream {
            record(state, in: storage)
        }
        let waiting = storage.withLock { state in
            state.finished = true
            return state.waiters.removeAll()
        }
        for waiter in waiting { waiter.resume(returning: .changed) }
    }

    /// Appends `state` and wakes the waiters whose predicate now holds.
    ///
    /// The waiters are listed in the same critical section as the append, so a waiter that registers
    /// later has already checked its predicate against this state (see ``waitWithoutTimeout(_:)``).
    private static func record(_ state: LoadingState<Value>, in storage: LockedValue<State>) {
        let (seen, waiting) = storage.withLock { recorder in
            recorder.states.append(state)
            return (recorder.states, recorder.waiters.conditions)
        }
        let satisfied = waiting.filter { $0.condition(seen) }
        guard !satisfied.isEmpty else { return }
        let woken = storage.withLock { recorder in
            satisfied.compactMap { recorder.waiters.remove(id: $0.id) }
        }
        for waiter in woken { waiter.resume(returning: .satisfied(seen)) }
    }
}
