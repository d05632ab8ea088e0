/// How a unit of work ended, as the runner sees it.
enum WorkEnding<State: Sendable>: Sendable {
    /// The work returned; `final` is the state to show (`nil`: none of its own, as a stream's end).
    case finished(final: State?)
    /// The work (or an interrupt) threw `error`.
    case failed(any Error)
    /// The work was stopped from outside (superseded, cancelled, reset): the slot already moved on.
    case stopped
}

/// The engine of ``LoadableController`` and ``ProcessController``: a ``WorkSlot`` under a lock, the
/// tasks it owns, a stop signal per running unit of work, and the streams of states.
///
/// Lock rule (see `PthreadMutex`): the lock guards only `Guarded`; continuations are resumed, streams
/// yielded to and tasks cancelled after it is released. States reach the streams through one deliverer
/// at a time (a writer that finds no delivery running becomes the deliverer and delivers until no newer
/// state is pending), so each stream sees the states in order and always ends on the latest, without a
/// lock held while yielding.
final class WorkRunner<State: WorkState & Sendable>: Sendable {
    private struct Guarded {
        var slot: WorkSlot<State>
        /// The stop signal of each running unit of work, once it waits for one.
        var stops: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// The tasks this runner made, by work number, until they end.
        var tasks: [UInt64: Task<Void, Never>] = [:]
        /// Each stream, with the version of the last state it was given (0: none yet).
        var subscribers: [UInt64: (continuation: AsyncStream<State>.Continuation, delivered: UInt64)] = [:]
        var lastSubscriber: UInt64 = 0
        /// Whether a writer is delivering states to the streams now.
        var delivering = false
        /// Whether the controller is gone: no more streams are fed.
        var isClosed = false
    }

    /// What a change requires once the lock is released.
    private struct Effects {
        var stop: CheckedContinuation<Void, Never>?
        var task: Task<Void, Never>?
        var changed = false
    }

    private let guarded: LockedValue<Guarded>

    init(_ initial: State) {
        guarded = LockedValue(Guarded(slot: WorkSlot(initial)))
    }

    /// The state shown.
    var state: State {
        guarded.withLock { $0.slot.state }
    }

    /// The state shown and its version (bumped by each change).
    var snapshot: (state: State, version: UInt64) {
        guarded.withLock { ($0.slot.state, $0.slot.version) }
    }

    /// Shows `state` (the owner's property, set directly) when no work runs and the state is still
    /// the one of `version` (the owner has seen the latest); returns the new version, or `nil` when it
    /// did nothing. Checked and done under one lock, so a load ending meanwhile is never overwritten.
    func replace(with state: State, ifIdleAt version: UInt64) -> UInt64? {
        let replaced = guarded.withLock { guarded -> UInt64? in
            guard guarded.slot.current == nil, guarded.slot.version == version else { return nil }
            guarded.slot.replace(with: state)
            return guarded.slot.version
        }
        if replaced != nil { deliver() }
        return replaced
    }

    // MARK: Transitions

    // Every transition returns whether the state changed: the controller then tells its observers.
    // The streams are told here.

    /// Starts new work, stopping the current one; shows `progress` unless it is `nil`.
    func start(showing progress: State?) -> (id: UInt64, changed: Bool) {
        let (id, effects) = guarded.withLock { guarded -> (UInt64, Effects) in
            let (id, outcome) = guarded.slot.start(showing: progress)
            return (id, Self.effects(of: outcome, in: &guarded))
        }
        return (id, carry(effects))
    }

    /// Records the task that runs work `id`, so that stopping the work cancels it; cancels it at once
    /// when the work was stopped before this call.
    func adopt(_ task: Task<Void, Never>, for id: UInt64) {
        let isCurrent = guarded.withLock { guarded -> Bool in
            guard guarded.slot.isCurrent(id) else { return false }
            guarded.tasks[id] = task
            return true
        }
        if !isCurrent { task.cancel() }
    }

    /// A write from work `id`, applied only when it is the current work.
    func write(_ new: State, from id: UInt64) -> Bool {
        let changed = guarded.withLock { $0.slot.write(new, from: id) }
        if changed { deliver() }
        return changed
    }

    /// Stops the current work; a state showing its progress goes back to what was there before.
    func cancel() -> Bool {
        carry(guarded.withLock { guarded in Self.effects(of: guarded.slot.cancel(), in: &guarded) })
    }

    /// Stops the current work and shows `initial`.
    func reset(to initial: State) -> Bool {
        carry(guarded.withLock { guarded in Self.effects(of: guarded.slot.reset(to: initial), in: &guarded) })
    }

    /// Cancels the current work if it is still `id`.
    func cancel(ifCurrent id: UInt64) -> Bool {
        carry(
            guarded.withLock { guarded in
                guard guarded.slot.isCurrent(id) else { return Effects() }
                return Self.effects(of: guarded.slot.cancel(), in: &guarded)
            })
    }

    /// Resets to `initial` if `id` is still the current work.
    func reset(ifCurrent id: UInt64, to initial: State) -> Bool {
        carry(
            guarded.withLock { guarded in
                guard guarded.slot.isCurrent(id) else { return Effects() }
                return Self.effects(of: guarded.slot.reset(to: initial), in: &guarded)
            })
    }

    /// Work `id` ended with `final`: applied only when it is the current work.
    func finish(_ id: UInt64, with final: State?) -> Bool {
        let changed = guarded.withLock { $0.slot.finish(id, with: final) }
        if changed { deliver() }
        return changed
    }

    /// Forgets the task of work `id` (it ended).
    private func release(_ id: UInt64) {
        guarded.withLock { _ = $0.tasks.removeValue(forKey: id) }
    }

    private static func effects(of outcome: WorkSlot<State>.Outcome, in guarded: inout Guarded) -> Effects {
        var effects = Effects(changed: outcome.changed)
        if let stopped = outcome.stopped {
            effects.stop = guarded.stops.removeValue(forKey: stopped)
            effects.task = guarded.tasks.removeValue(forKey: stopped)
        }
        return effects
    }

    private func carry(_ effects: Effects) -> Bool {
        effects.stop?.resume()
        effects.task?.cancel()
        if effects.changed { deliver() }
        return effects.changed
    }

    // MARK: Running

    /// Runs `work` as work `id` for the calling task, with its `interrupts`, until it ends or is stopped,
    /// then applies its ending. `failure` makes the state of an error; `isCancelSignal` and
    /// `isResetSignal` recognise the errors the work throws to cancel or reset from inside.
    func run(
        _ id: UInt64, interrupts: [Interrupts], work: @escaping @Sendable () async throws -> State?,
        failure: @Sendable (any Error) -> State, resetState: State,
        isCancelSignal: @Sendable (any Error) -> Bool, isResetSignal: @Sendable (any Error) -> Bool,
        notify: @Sendable () -> Void
    ) async {
        // The work runs in a task of its own (with the caller's priority and task-local values), so
        // that a load whose work ignores cancellation still ends at once when it is stopped, times out
        // or its caller is cancelled: the group below waits only for children that return as soon as
        // they are cancelled. The stopped work is cancelled, and whatever it returns later is dropped.
        guard !Task.isCancelled else {
            // The caller was cancelled before the load began: its work never starts.
            if cancel(ifCurrent: id) { notify() }
            return
        }
        let outcome = OneShot<State?>()
        let workTask = Task {
            do {
                outcome.resolve(.success(try await work()))
            } catch {
                outcome.resolve(.failure(error))
            }
        }
        let isCurrent: @Sendable () -> Bool = { [weak self] in
            self?.guarded.withLock { $0.slot.isCurrent(id) } ?? false
        }
        // The work's task is not a child: the caller's cancellation reaches it through this handler.
        let ending = await withTaskCancellationHandler {
            await race(id, outcome: outcome, interrupts: interrupts, isCurrent: isCurrent)
        } onCancel: {
            workTask.cancel()
        }
        workTask.cancel()
        let changed: Bool
        switch ending {
        case .stopped:
            // Stopped from outside, the slot has moved on already and this does nothing; stopped
            // because the calling task was cancelled (its stop signal ends too), the load is cancelled.
            changed = cancel(ifCurrent: id)
        case .finished(let final):
            changed = Task.isCancelled ? cancel(ifCurrent: id) : finish(id, with: final)
        case .failed(let error):
            if isResetSignal(error) {
                changed = reset(ifCurrent: id, to: resetState)
            } else if isCancelSignal(error) || Task.isCancelled {
                changed = cancel(ifCurrent: id)
            } else {
                // Also a `CancellationError` the work threw by itself, with nothing cancelling the load
                // (an inner timeout, say): a failure, shown.
                changed = finish(id, with: failure(error))
            }
        }
        // After the transition, so that a task adopted meanwhile is forgotten too.
        release(id)
        if changed { notify() }
    }

    /// Waits for the first of the work's result, its stop signal and its interrupts (each returns as
    /// soon as it is cancelled), and cancels the others.
    private func race(
        _ id: UInt64, outcome: OneShot<State?>, interrupts: [Interrupts], isCurrent: @escaping @Sendable () -> Bool
    ) async -> WorkEnding<State> {
        await withTaskGroup(of: WorkEnding<State>?.self) { group -> WorkEnding<State> in
            group.addTask {
                do {
                    return .finished(final: try await outcome.value(cancellable: true))
                } catch {
                    // Cancelled while waiting: the load is ending for another reason, told by a sibling.
                    return Task.isCancelled ? nil : .failed(error)
                }
            }
            group.addTask {
                await self.waitForStop(of: id)
                return .stopped
            }
            for interrupts in interrupts {
                group.addTask { await interrupts.run(while: isCurrent) }
            }
            var ending = WorkEnding<State>.stopped
            while let next = await group.next() {
                guard let next else { continue }  // interrupts that ran out, a wait cut short
                ending = next
                break
            }
            group.cancelAll()
            return ending
        }
    }

    /// Returns when work `id` is stopped (or is not the current work), or when the calling task is
    /// cancelled.
    private func waitForStop(of id: UInt64) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let stopped = guarded.withLock { guarded -> Bool in
                    guard guarded.slot.isCurrent(id), !Task.isCancelled else { return true }
                    guarded.stops[id] = continuation
                    return false
                }
                if stopped { continuation.resume() }
            }
        } onCancel: {
            guarded.withLock { $0.stops.removeValue(forKey: id) }?.resume()
        }
    }

    // MARK: Streams of states

    /// A stream of the states: the current one first, then each new one. A consumer slower than the
    /// changes skips to the latest. The stream finishes when the controller is released.
    func states() -> AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(1))
        let id = guarded.withLock { guarded -> UInt64? in
            guard !guarded.isClosed else { return nil }
            guarded.lastSubscriber &+= 1
            guarded.subscribers[guarded.lastSubscriber] = (continuation, 0)
            return guarded.lastSubscriber
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.guarded.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        // The current state reaches the new stream through the deliverer, in order with every other.
        deliver()
        return stream
    }

    /// Delivers the latest state to every stream that has not had it, unless another writer is
    /// delivering (that one delivers the latest state too before it stops).
    private func deliver() {
        var isDeliverer = false
        while true {
            let next = guarded.withLock { guarded -> (State, [AsyncStream<State>.Continuation])? in
                if !isDeliverer {
                    guard !guarded.delivering else { return nil }
                    guarded.delivering = true
                }
                let version = guarded.slot.version &+ 1  // never 0, the "nothing yet" mark
                var behind: [AsyncStream<State>.Continuation] = []
                for (id, subscriber) in guarded.subscribers where subscriber.delivered != version {
                    guarded.subscribers[id]?.delivered = version
                    behind.append(subscriber.continuation)
                }
                guard !behind.isEmpty else {
                    guarded.delivering = false
                    return nil
                }
                return (guarded.slot.state, behind)
            }
            guard let (state, behind) = next else { return }
            isDeliverer = true
            for continuation in behind { continuation.yield(state) }
        }
    }

    /// The controller is gone: stops the current work and finishes every stream.
    func close() {
        _ = cancel()
        let subscribers = guarded.withLock { guarded in
            guarded.isClosed = true
            defer { guarded.subscribers = [:] }
            return guarded.subscribers.values.map(\.continuation)
        }
        for continuation in subscribers { continuation.finish() }
    }
}
