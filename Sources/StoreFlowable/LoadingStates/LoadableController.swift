public import Observation

/// Owns a ``LoadableState`` and the task that loads it: start a load, and the controller cancels the
/// previous one, shows `.loading`, and ends in `.loaded` or `.error`; or stream several states from one
/// load; cancel or reset from outside or, by throwing ``CancelLoadable`` or ``ResetLoadable``, from
/// inside; warn or time out when a load takes long.
///
/// ```swift
/// let user = LoadableController<User>()
/// user.load(timeout: .seconds(10)) { try await api.user(id: 42) }
/// for await state in user.states() { print(state) }   // loading, then loaded(…) or error(…)
/// ```
///
/// **Only the current load writes the state.** Starting a load supersedes the running one; ``cancel()``
/// and ``reset()`` stop it. From then on nothing the stopped load does reaches ``state``: not its value,
/// not a streamed state, not its error (whatever error a cancelled load ends with, a cancelled URL
/// request's say, it is not shown).
///
/// It is usable from any code: every member may be called from any task or thread, concurrently.
/// ``state`` is observable with the `Observation` module (SwiftUI views update when it changes;
/// `withObservationTracking` sees each change), and ``states()`` streams it. Observers are told after
/// each change.
///
/// Time is read from the clock given to the initializer (a `ManualClock` from `StoreFlowableTesting` in
/// tests), which drives interrupts and timeouts.
///
/// Releasing the controller cancels its running load and finishes its streams.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public final class LoadableController<Value: Sendable>: Observable, Sendable {
    private let runner: WorkRunner<LoadableState<Value>>
    private let clock: any Clock<Duration>
    private let registrar = ObservationRegistrar()
    /// The key path of ``state``, made once: a key path into a generic class is instantiated by the
    /// runtime (demangling its generic arguments) each time its literal is evaluated, which cost more
    /// than the rest of a load.
    private let stateKeyPath: any KeyPath<LoadableController, LoadableState<Value>> & Sendable = \.state

    /// Creates a controller showing `initial`.
    ///
    /// - Parameters:
    ///   - initial: The state before the first load; ``LoadableState/absent`` by default.
    ///   - clock: The clock of interrupts and timeouts; a `ContinuousClock` by default.
    public init(_ initial: LoadableState<Value> = .absent, clock: any Clock<Duration> = ContinuousClock()) {
        runner = WorkRunner(initial)
        self.clock = clock
    }

    deinit {
        runner.close()
    }

    /// The state shown: the initial state, then the states of the current load.
    public var state: LoadableState<Value> {
        registrar.access(self, keyPath: stateKeyPath)
        return runner.state
    }

    /// A stream of ``state``: the current state first, then each new one, until the controller is
    /// released. A consumer slower than the changes skips to the latest.
    ///
    /// - Returns: A new stream; each call makes one.
    public func states() -> AsyncStream<LoadableState<Value>> {
        runner.states()
    }

    /// Loads a value in a task the controller owns, and returns at once.
    ///
    /// The running load, if any, is cancelled and will write nothing more. The state becomes
    /// ``LoadableState/loading`` (unless `silently`), then ``LoadableState/loaded(_:)`` with the value
    /// `work` returns, or ``LoadableState/error(_:)`` with the error it throws. Throwing
    /// ``CancelLoadable`` ends the load as ``cancel()`` does, and ``ResetLoadable`` as ``reset()`` does.
    ///
    /// - Parameters:
    ///   - silently: When `true`, the state stays as it is until the load ends (a refresh that keeps
    ///     the shown value).
    ///   - priority: The priority of the task.
    ///   - interrupts: Delays after which `onInterrupt` runs while the load goes on. They add up:
    ///     `[.seconds(1), .seconds(2)]` calls it 1 s and 3 s after the start.
    ///   - timeout: When set, a load still running after this long ends with ``TimeoutError`` as its
    ///     error, and `work` is cancelled.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the load
    ///     with the thrown error (and cancels `work`), so it can time out too.
    ///   - work: Loads the value. It is cancelled when the load is superseded, cancelled or reset.
    /// - Returns: The task that runs the load; it ends when the load has ended.
    @discardableResult
    public func load(
        silently: Bool = false, priority: TaskPriority? = nil, interrupts: [Duration] = [],
        timeout: Duration? = nil, onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Value
    ) -> Task<Void, Never> {
        let id = begin(silently: silently)
        let plan = plan(interrupts, timeout, onInterrupt)
        let notify = notifier()
        let task = Task(priority: priority) { [runner] in
            await runner.runLoad(id, plan, work, notify: notify)
        }
        runner.adopt(task, for: id)
        return task
    }

    /// Loads a value for the calling task, and returns when the load has ended.
    ///
    /// The same as ``load(silently:priority:interrupts:timeout:onInterrupt:_:)``, except that the caller
    /// waits: `work` runs with the calling task's priority and task-local values, and cancelling the
    /// calling task cancels the load (nothing it produced is shown). It returns as soon as the load has
    /// ended: when it is superseded, cancelled, reset or timed out, at once, even if `work` ignores its
    /// cancellation and runs on (its result is then dropped).
    ///
    /// - Parameters:
    ///   - silently: When `true`, the state stays as it is until the load ends.
    ///   - interrupts: Delays after which `onInterrupt` runs while the load goes on; they add up.
    ///   - timeout: When set, a load still running after this long ends with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the load.
    ///   - work: Loads the value.
    public func loadAndWait(
        silently: Bool = false, interrupts: [Duration] = [], timeout: Duration? = nil,
        onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Value
    ) async {
        let id = begin(silently: silently)
        await runner.runLoad(id, plan(interrupts, timeout, onInterrupt), work, notify: notifier())
    }

    /// Runs a load that yields states over time (partial results, progress), in a task the controller
    /// owns, and returns at once.
    ///
    /// Each state `work` passes to its ``LoadableYield`` is shown while the load is the current one;
    /// once it is superseded, cancelled or reset, its yields do nothing. When `work` returns, the last
    /// state it yielded stays (a load that returns while its last state is `.loading` goes back to the
    /// state before it); when it throws, the error is shown.
    ///
    /// - Parameters:
    ///   - silently: When `true`, the state stays as it is until the first yield.
    ///   - priority: The priority of the task.
    ///   - interrupts: Delays after which `onInterrupt` runs while the load goes on; they add up.
    ///   - timeout: When set, a load still running after this long ends with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the load.
    ///   - work: Yields the states of the load.
    /// - Returns: The task that runs the load.
    @discardableResult
    public func loadStreaming(
        silently: Bool = false, priority: TaskPriority? = nil, interrupts: [Duration] = [],
        timeout: Duration? = nil, onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable (LoadableYield<Value>) async throws -> Void
    ) -> Task<Void, Never> {
        let id = begin(silently: silently)
        let plan = plan(interrupts, timeout, onInterrupt)
        let notify = notifier()
        let task = Task(priority: priority) { [runner] in
            await runner.runStream(id, plan, work, notify: notify)
        }
        runner.adopt(task, for: id)
        return task
    }

    /// Runs a load that yields states over time for the calling task, and returns when it has ended.
    ///
    /// The same as ``loadStreaming(silently:priority:interrupts:timeout:onInterrupt:_:)``, with the
    /// caller waiting, as ``loadAndWait(silently:interrupts:timeout:onInterrupt:_:)`` does.
    ///
    /// - Parameters:
    ///   - silently: When `true`, the state stays as it is until the first yield.
    ///   - interrupts: Delays after which `onInterrupt` runs while the load goes on; they add up.
    ///   - timeout: When set, a load still running after this long ends with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the load.
    ///   - work: Yields the states of the load.
    public func loadStreamingAndWait(
        silently: Bool = false, interrupts: [Duration] = [], timeout: Duration? = nil,
        onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable (LoadableYield<Value>) async throws -> Void
    ) async {
        let id = begin(silently: silently)
        await runner.runStream(id, plan(interrupts, timeout, onInterrupt), work, notify: notifier())
    }

    /// Cancels the running load: nothing it produces is shown. A `.loading` state goes back to what was
    /// there before the load; any other state stays. Does nothing when no load runs.
    public func cancel() {
        if runner.cancel() { didChange() }
    }

    /// Cancels the running load, if any, and shows ``LoadableState/absent``.
    public func reset() {
        if runner.reset(to: .absent) { didChange() }
    }

    // MARK: Internals

    /// Starts a load in the runner and tells observers when the state changed.
    private func begin(silently: Bool) -> UInt64 {
        let (id, changed) = runner.start(showing: silently ? nil : .loading)
        if changed { didChange() }
        return id
    }

    private func plan(
        _ delays: [Duration], _ timeout: Duration?, _ onInterrupt: @escaping @Sendable (Duration) throws -> Void
    ) -> [Interrupts] {
        Interrupts.plan(delays, timeout, clock, onInterrupt)
    }

    /// Tells observers of a change, from a task that must not keep the controller alive.
    private func notifier() -> @Sendable () -> Void {
        { [weak self] in self?.didChange() }
    }

    private func didChange() {
        registrar.willSet(self, keyPath: stateKeyPath)
        registrar.didSet(self, keyPath: stateKeyPath)
    }
}

extension LoadableState: WorkState {
    var isInProgress: Bool { isLoading }
    var isResetState: Bool { isAbsent }
}
