@testable import StoreFlowable

/// A gate a test opens: work waits at it; the test can wait until work has arrived there.
final class Gate: Sendable {
    private struct Inner {
        var isOpen = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var arrivals = 0
        var arrivalWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let inner = LockedValue(Inner())

    /// Waits until the gate is open (not cancellable: the test opens it).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (open, arrivals) = inner.withLock { inner -> (Bool, [CheckedContinuation<Void, Never>]) in
                inner.arrivals += 1
                defer { inner.arrivalWaiters = [] }
                if !inner.isOpen { inner.waiting.append(continuation) }
                return (inner.isOpen, inner.arrivalWaiters)
            }
            for arrival in arrivals { arrival.resume() }
            if open { continuation.resume() }
        }
    }

    /// Returns once some work has reached ``wait()``.
    func arrived() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = inner.withLock { inner -> Bool in
                if inner.arrivals == 0 { inner.arrivalWaiters.append(continuation) }
                return inner.arrivals > 0
            }
            if already { continuation.resume() }
        }
    }

    /// Opens the gate: every waiter goes on, and later ones do not wait.
    func open() {
        let waiting = inner.withLock { inner in
            inner.isOpen = true
            defer { inner.waiting = [] }
            return inner.waiting
        }
        for waiter in waiting { waiter.resume() }
    }
}

/// Starts `loadAndWait` on `controller` in a task of its own, with work that waits at `gate` whatever
/// happens (it ignores its cancellation) and then returns `"late"`; returns the task once the work runs.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
func awaitedLoad(of controller: LoadableController<String>, heldAt gate: Gate) async -> Task<Void, Never> {
    let caller = Task {
        await controller.loadAndWait {
            await gate.wait()
            return "late"
        }
    }
    await gate.arrived()
    return caller
}

/// Work that runs until its task is cancelled, then returns or throws what the test chose (as work that
/// does not stop at cancellation does), recording that it saw the cancellation.
///
/// The work runs in a task of its own (a controller does not wait for it), so a test asks
/// ``wasCancelled()``, which waits until the work has ended.
final class Probe: Sendable {
    private let gate = Gate()
    private let ended = Gate()
    private let cancelled = LockedValue(false)

    /// Waits until the work has ended; returns whether it saw its task cancelled.
    func wasCancelled() async -> Bool {
        await ended.wait()
        return cancelled.withLock { $0 }
    }

    /// Whether the work has ended so far having seen its cancellation (without waiting).
    var sawCancellationSoFar: Bool { cancelled.withLock { $0 } }

    /// Returns once the work runs.
    func started() async {
        await gate.arrived()
    }

    /// Runs until cancelled, then returns `value`.
    func runUntilCancelled<Value>(returning value: Value) async throws -> Value {
        await waitForCancellation()
        return value
    }

    /// Runs until cancelled, then throws `error`.
    func runUntilCancelled<Value>(throwing error: any Error) async throws -> Value {
        await waitForCancellation()
        throw error
    }

    private func waitForCancellation() async {
        let box = gate
        await withTaskCancellationHandler {
            await box.wait()
        } onCancel: {
            box.open()
        }
        cancelled.withLock { $0 = Task.isCancelled }
        ended.open()
    }
}
