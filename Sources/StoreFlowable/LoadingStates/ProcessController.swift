public import Observation

/// Owns a ``ProcessState`` and the task that runs a process (saving, deleting, syncing): start one, and
/// the controller cancels the running one, shows `.running(kind)`, and ends in `.finished(kind)` or
/// `.failed(process: kind, error:)`; cancel or reset from outside or, by throwing ``CancelProcess`` or
/// ``ResetProcess``, from inside; warn or time out when it takes long.
///
/// ```swift
/// enum Action { case save, delete }
/// let actions = ProcessController<Action>()
/// actions.run(.save, timeout: .seconds(30)) { try await api.save(draft) }
/// ```
///
/// For an object with one process, `ProcessController<SingleProcess>` has the shorthands
/// ``run(silently:priority:interrupts:timeout:onInterrupt:_:)`` and friends without a kind.
///
/// **Only the current process writes the state**, as for ``LoadableController``: a process superseded
/// by a new ``run(_:silently:priority:interrupts:timeout:onInterrupt:_:)``, cancelled or reset never
/// writes its end, whatever error it throws.
///
/// Every member may be called from any task or thread, concurrently. ``state`` is observable with the
/// `Observation` module and streamed by ``states()``. Time is read from the clock given to the
/// initializer. Releasing the controller cancels its running process and finishes its streams.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public final class ProcessController<Kind: Sendable>: Observable, Sendable {
    private let runner: WorkRunner<ProcessState<Kind>>
    private let clock: any Clock<Duration>
    private let registrar = ObservationRegistrar()
    /// The key path of ``state``, made once: a key path into a generic class is instantiated by the
    /// runtime (demangling its generic arguments) each time its literal is evaluated, which cost more
    /// than the rest of a load.
    private let stateKeyPath: any KeyPath<ProcessController, ProcessState<Kind>> & Sendable = \.state

    /// Creates a controller showing `initial`.
    ///
    /// - Parameters:
    ///   - initial: The state before the first process; ``ProcessState/idle`` by default.
    ///   - clock: The clock of interrupts and timeouts; a `ContinuousClock` by default.
    public init(_ initial: ProcessState<Kind> = .idle, clock: any Clock<Duration> = ContinuousClock()) {
        runner = WorkRunner(initial)
        self.clock = clock
    }

    deinit {
        runner.close()
    }

    /// The state shown: the initial state, then the states of the current process.
    public var state: ProcessState<Kind> {
        registrar.access(self, keyPath: stateKeyPath)
        return runner.state
    }

    /// A stream of ``state``: the current state first, then each new one, until the controller is
    /// released. A consumer slower than the changes skips to the latest.
    ///
    /// - Returns: A new stream; each call makes one.
    public func states() -> AsyncStream<ProcessState<Kind>> {
        runner.states()
    }

    /// Runs the process `kind` in a task the controller owns, and returns at once.
    ///
    /// The running process, if any, is cancelled and will write nothing more. The state becomes
    /// `.running(kind)` (unless `silently`), then `.finished(kind)` when `work` returns, or
    /// `.failed(process: kind, error:)` with the error it throws. Throwing ``CancelProcess`` ends the
    /// process as ``cancel()`` does, and ``ResetProcess`` as ``reset()`` does.
    ///
    /// - Parameters:
    ///   - kind: Which process this is.
    ///   - silently: When `true`, the state stays as it is until the process ends.
    ///   - priority: The priority of the task.
    ///   - interrupts: Delays after which `onInterrupt` runs while the process goes on; they add up.
    ///   - timeout: When set, a process still running after this long fails with ``TimeoutError``,
    ///     and `work` is cancelled.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the
    ///     process with the thrown error (and cancels `work`).
    ///   - work: The process. It is cancelled when the process is superseded, cancelled or reset.
    /// - Returns: The task that runs the process; it ends when the process has ended.
    @discardableResult
    public func run(
        _ kind: Kind, silently: Bool = false, priority: TaskPriority? = nil, interrupts: [Duration] = [],
        timeout: Duration? = nil, onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Void
    ) -> Task<Void, Never> {
        let id = begin(kind, silently: silently)
        let plan = Interrupts.plan(interrupts, timeout, clock, onInterrupt)
        let notify = notifier()
        let task = Task(priority: priority) { [runner] in
            await runner.runProcess(id, kind, plan, work, notify: notify)
        }
        runner.adopt(task, for: id)
        return task
    }

    /// Runs the process `kind` for the calling task, and returns when it has ended.
    ///
    /// The same as ``run(_:silently:priority:interrupts:timeout:onInterrupt:_:)``, except that the caller
    /// waits: `work` runs with the calling task's priority and task-local values, and cancelling the
    /// calling task cancels the process (its end is not shown). It returns as soon as the process has
    /// ended, even if `work` ignores its cancellation and runs on.
    ///
    /// - Parameters:
    ///   - kind: Which process this is.
    ///   - silently: When `true`, the state stays as it is until the process ends.
    ///   - interrupts: Delays after which `onInterrupt` runs while the process goes on; they add up.
    ///   - timeout: When set, a process still running after this long fails with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the process.
    ///   - work: The process.
    public func runAndWait(
        _ kind: Kind, silently: Bool = false, interrupts: [Duration] = [], timeout: Duration? = nil,
        onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Void
    ) async {
        let id = begin(kind, silently: silently)
        await runner.runProcess(
            id, kind, Interrupts.plan(interrupts, timeout, clock, onInterrupt), work, notify: notifier())
    }

    /// Cancels the running process: its end is not shown. A `.running` state goes back to what was there
    /// before the process; any other state stays. Does nothing when no process runs.
    public func cancel() {
        if runner.cancel() { didChange() }
    }

    /// Cancels the running process, if any, and shows ``ProcessState/idle``.
    public func reset() {
        if runner.reset(to: .idle) { didChange() }
    }

    // MARK: Internals

    private func begin(_ kind: Kind, silently: Bool) -> UInt64 {
        let (id, changed) = runner.start(showing: silently ? nil : .running(kind))
        if changed { didChange() }
        return id
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

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ProcessController where Kind == SingleProcess {
    /// Runs the one process of this controller in a task it owns, and returns at once; see
    /// ``run(_:silently:priority:interrupts:timeout:onInterrupt:_:)``.
    ///
    /// - Parameters:
    ///   - silently: When `true`, the state stays as it is until the process ends.
    ///   - priority: The priority of the task.
    ///   - interrupts: Delays after which `onInterrupt` runs while the process goes on; they add up.
    ///   - timeout: When set, a process still running after this long fails with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the process.
    ///   - work: The process.
    /// - Returns: The task that runs the process.
    @discardableResult
    public func run(
        silently: Bool = false, priority: TaskPriority? = nil, interrupts: [Duration] = [],
        timeout: Duration? = nil, onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Void
    ) -> Task<Void, Never> {
        run(
            SingleProcess(), silently: silently, priority: priority, interrupts: interrupts, timeout: timeout,
            onInterrupt: onInterrupt, work)
    }

    /// Runs the one process of this controller for the calling task; see
    /// ``runAndWait(_:silently:interrupts:timeout:onInterrupt:_:)``.
    ///
    /// - Parameters:
    ///   - silently: When `true`, the state stays as it is until the process ends.
    ///   - interrupts: Delays after which `onInterrupt` runs while the process goes on; they add up.
    ///   - timeout: When set, a process still running after this long fails with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the process.
    ///   - work: The process.
    public func runAndWait(
        silently: Bool = false, interrupts: [Duration] = [], timeout: Duration? = nil,
        onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Void
    ) async {
        await runAndWait(
            SingleProcess(), silently: silently, interrupts: interrupts, timeout: timeout, onInterrupt: onInterrupt,
            work)
    }
}

extension ProcessState: WorkState {
    var isInProgress: Bool { isRunning }
    var isResetState: Bool { isIdle }
}
