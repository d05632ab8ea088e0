/// Collects the origin requests of many keys that arrive within a short window and sends them as one
/// call of a batch function, like GraphQL's DataLoader.
///
/// ```swift
/// let users = BatchedOrigin<Int, User> { ids in
///     let found = try await api.users(ids: ids)          // one request for every id of the batch
///     return Dictionary(uniqueKeysWithValues: found.map { ($0.id, .success($0)) })
/// }
/// let store = KeyedStore(cache: MemoryCache<Int, User>(policy: policy)) { id in
///     try await users.load(id)                          // a miss joins the next batch
/// }
/// ```
///
/// A store's fetch (`fetchDataFromOrigin()`, or the fetch closure of a ``KeyedStore``) calls
/// ``load(_:)`` instead of the origin. The store keeps its single flight per key; the batcher merges the
/// fetches of different keys. Its promises:
///
/// - **Windows.** The first key to arrive when no batch is collecting keys starts a batch and its
///   window: one sleep of `window` on the injected clock, in one task per batch (never a task per
///   call). When the window ends, the batch goes to the origin as one call of `fetch`. A batch that
///   reaches `maxBatchSize` distinct keys goes at once, and the next key starts a new batch and window.
/// - **Duplicates.** A key already waiting in the pending batch joins its entry and does not count twice
///   toward `maxBatchSize`; `fetch` never receives a key twice. A key whose dispatched batch is still
///   running does not join it: it goes to the pending batch, so every caller's value is read by an origin
///   call that began after the caller arrived. (Behind a store, a key is loaded again while its earlier
///   load runs only when the store superseded that load, after an `update` for one: the earlier call may
///   have read the origin before the write, and its value must not come back. The store's single flight
///   already merges concurrent loads of one key.)
/// - **Outcomes.** For each key, `.success(value)` in the returned dictionary is the value of its
///   callers, `.failure(error)` is thrown to them, and a missing entry throws
///   ``BatchedOriginError/missingResult``; entries for keys not asked for are ignored. When `fetch`
///   throws, every caller of every key of the batch gets that error.
/// - **No caching.** Nothing outlives a batch: once a batch ended, a new load of one of its keys goes
///   to a new batch, whether the key's outcome was a value or an error. Cache with a store.
/// - **Cancellation.** `fetch` runs in an unstructured task of its own, owned by the batcher, so one
///   caller's cancellation never cancels the origin call of the others. A cancelled caller always
///   throws `CancellationError` at once, even while a `fetch` that ignores cancellation still runs; see
///   ``load(_:)`` for what it takes away with it.
/// - **Isolation.** Instances share no state: batches, keys and callers of one never mix with another's.
///   Make one per request or per tenant to keep their keys in separate origin calls.
///
/// `fetch`, the clock and the observer are called outside the batcher's lock, from its tasks or from
/// the caller's task, never from inside a cancellation handler: the cancellation handlers of `fetch` and
/// of the window's sleep run on the task of the caller that left last, after its wait ended. A batch's
/// tasks are unstructured tasks started by whichever task started the batch or filled it, and inherit
/// its priority and task-local values (except ``FetchAttempt/current``, which is the batch's own inside
/// `fetch`). Every method may be called from any task, concurrently.
public final class BatchedOrigin<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private typealias State = BatchState<Key, OneShot<Value>, FlightHandle>

    /// The keys and callers. Lock rule (see ``PthreadMutex``): transitions only change the state and
    /// return effects; continuations are resumed, tasks started or cancelled and user code called after
    /// unlocking, and never from a caller's cancellation handler. A `FlightHandle` is the cancel switch of
    /// a batch's window timer or of its origin call.
    private let state: LockedValue<State>
    private let window: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let observer: (any StoreEventObserver)?
    private let fetch: @Sendable ([Key]) async throws -> [Key: Result<Value, any Error>]

    /// Creates a batcher over the batch function `fetch`.
    ///
    /// Out-of-range settings are clamped, never a crash: a `maxBatchSize` below 1 counts as 1 (every
    /// key alone, with no window), a negative `window` as zero (the batch collects the keys that arrive
    /// while its task starts).
    ///
    /// - Parameters:
    ///   - window: How long a batch collects keys, counted from when its task starts sleeping, right
    ///     after its first key arrives. 5 ms by default.
    ///   - maxBatchSize: The most distinct keys in one call of `fetch`; a batch that reaches it is sent at
    ///     once. 100 by default.
    ///   - clock: The clock the window sleeps on; inject a manual clock in tests.
    ///   - observer: Receives ``StoreEvent/Kind/batchDispatched(size:)`` for every batch dispatched to
    ///     the origin (with no key, and `Value` as the data type), just before the batch's task starts,
    ///     outside the batcher's lock, on the task that dispatched it: the batch's window task, or the
    ///     caller whose key filled the batch. (A batch whose callers all leave in between is reported but
    ///     never sent.)
    ///   - fetch: The batch function: gets the distinct keys of one batch, in the order they arrived
    ///     (never empty), and returns each key's outcome. It runs in a task of the batcher's own, at most
    ///     once per dispatched batch, cancelled when every caller of every key of the batch has left; a
    ///     batch whose callers all left before its task started is not sent. Inside it,
    ///     ``FetchAttempt/current`` is the batch's own: `forbidRetry()` (a `POST`) forbids the retry of
    ///     every caller the batch fails, each caller's store fetch included.
    public init<C: Clock<Duration>>(
        window: Duration = .milliseconds(5), maxBatchSize: Int = 100, clock: C = ContinuousClock(),
        observer: (any StoreEventObserver)? = nil,
        fetch: @escaping @Sendable ([Key]) async throws -> [Key: Result<Value, any Error>]
    ) {
        self.state = LockedValue(State(maxBatchSize: maxBatchSize))
        self.window = max(.zero, window)
        self.sleep = { duration in try await clock.sleep(for: duration) }
        self.observer = observer
        self.fetch = fetch
    }

    /// How many distinct keys wait in the batch that is collecting keys (zero when none is).
    ///
    /// For tests and metrics: a test waits for it before it moves the clock past the window.
    public var pendingKeyCount: Int {
        state.withLock { $0.pendingKeyCount }
    }

    /// How many dispatched batches some caller still waits for.
    ///
    /// For tests and metrics. A batch whose callers all left stops counting at once, even while its
    /// `fetch`, cancelled, has not returned yet.
    public var runningBatchCount: Int {
        state.withLock { $0.runningBatchCount }
    }

    /// How many callers of ``load(_:)`` wait, in the pending batch and in the dispatched ones.
    var waitingCallerCount: Int {
        state.withLock { $0.callerCount }
    }

    /// Loads `key`'s value through the next batch: joins the pending batch (starting one if none is
    /// collecting keys), also when a running batch already asks for `key`, and waits for its outcome.
    ///
    /// Cancellation ends the call at once with `CancellationError`, whatever `fetch` does:
    /// - A caller cancelled before the call adds nothing to any batch.
    /// - A caller cancelled while its batch is pending leaves it; a key whose callers all left is not
    ///   sent, and a batch whose keys all left is discarded with its window: the origin is never called
    ///   with no keys.
    /// - A caller cancelled after its batch was dispatched leaves the batch's outcome; when every caller
    ///   of every key of the batch has left, the task running `fetch` is cancelled.
    ///
    /// The caller leaves on its own task, right after its wait ends and before it throws; its
    /// cancellation handler only ends the wait.
    ///
    /// - Parameter key: The key to load.
    /// - Returns: The value the batch function returned for `key`.
    /// - Throws: The error the batch function returned for `key`, or the error it threw;
    ///   ``BatchedOriginError/missingResult`` when its dictionary had no entry for `key`;
    ///   `CancellationError` when the calling task is cancelled.
    public func load(_ key: Key) async throws -> Value {
        try Task.checkCancellation()
        let waiter = OneShot<Value>()
        let (caller, effects) = state.withLock { $0.enqueue(key, waiter: waiter, makeHandle: FlightHandle.init) }
        perform(effects)
        do {
            // A cancellation only resolves the waiter, in its handler (which runs on the cancelling thread,
            // with the runtime's lock of this task held); leaving the batch, which may cancel its window
            // or its origin call and so run the clock's or the batch function's cancellation handlers, is
            // done here, on this task, outside every lock.
            return try await waiter.value(cancellable: true)
        } catch {
            // Off the batch before returning, so that the counts no longer include this caller. A caller
            // already served (its batch failed) is no longer in the state, and leaving changes nothing.
            perform(state.withLock { $0.leave(caller: caller) })
            guard let forbidden = error as? RetryForbidden else { throw error }
            FetchAttempt.current?.forbidRetry()
            throw forbidden.error
        }
    }

    /// Performs a transition's effects, after unlocking.
    private func perform(_ effects: State.Effects) {
        effects.cancel?.cancel()
        if let (timer, batch) = effects.startWindow {
            timer.start { [self] in await endWindow(of: batch) }
        }
        if let (flight, batch, keys) = effects.dispatch {
            observer?.observe(StoreEvent(.batchDispatched(size: keys.count), key: nil, dataType: Value.self))
            flight.start { [self] in await run(batch, keys) }
        }
    }

    /// The window task of batch `batch`: sleeps for the window, then dispatches the batch if it still
    /// collects keys. The task is cancelled when the batch is dispatched by size or discarded; any clock
    /// error ends the window early rather than leaving the batch waiting.
    private func endWindow(of batch: Int) async {
        try? await sleep(window)
        perform(state.withLock { $0.windowEnded(batch: batch, makeHandle: FlightHandle.init) })
    }

    /// The origin call of batch `batch`: calls `fetch` with `keys` and hands each waiting caller its key's
    /// outcome.
    ///
    /// A task that starts cancelled belongs to a batch whose callers all left between its dispatch and
    /// the task's start (its handle was cancelled before it started): nobody waits for the answer, so the
    /// origin is not called.
    private func run(_ batch: Int, _ keys: [Key]) async {
        guard !Task.isCancelled else { return }
        // The batch's own attempt: the task inherited the attempt of the caller that started the batch,
        // whose refusal would reach that caller's store fetch only.
        let refusal = RetryRefusal()
        let attempt = FetchAttempt(number: FetchAttempt.current?.number ?? 1, refusal: refusal)
        let outcome: Result<[Key: Result<Value, any Error>], any Error>
        do {
            outcome = .success(try await FetchAttempt.$scoped.withValue(attempt) { try await fetch(keys) })
        } catch {
            outcome = .failure(error)
        }
        let retryForbidden = refusal.wasRefused
        let served = state.withLock { $0.finish(batch: batch) }
        for (key, waiters) in served {
            var result: Result<Value, any Error>
            switch outcome {
            case .success(let results): result = results[key] ?? .failure(BatchedOriginError.missingResult)
            case .failure(let error): result = .failure(error)
            }
            if retryForbidden, case .failure(let error) = result { result = .failure(RetryForbidden(error: error)) }
            for waiter in waiters { waiter.resolve(result) }
        }
    }
}

/// The failure of a batch whose function called ``FetchAttempt/forbidRetry()``: each caller forbids the
/// retry of its own attempt (its store's fetch), then throws `error`.
private struct RetryForbidden: Error {
    let error: any Error
}
