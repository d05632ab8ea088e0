/// A state that a unit of work (a load or a process) shows while it runs.
protocol WorkState {
    /// Whether this state says that work is in progress (`.loading`, `.running`).
    var isInProgress: Bool { get }
    /// Whether this is the state a reset shows (`.absent`, `.idle`).
    var isResetState: Bool { get }
}

/// The state of one slot that runs one unit of work at a time (a ``LoadableController``'s or a
/// ``ProcessController``'s), as a pure value: each transition says whom to stop and whether the state
/// changed, and the controller carries that out after its lock is released.
///
/// The rule it enforces: **only the current work writes the state.** Starting work stops the current
/// one; ``cancel()`` and ``reset(to:)`` stop it too; from then on a write carrying the stopped work's
/// number is refused, whatever it is (a final value, a streamed one, an error).
struct WorkSlot<State: WorkState & Sendable> {
    /// The work allowed to write.
    struct Current {
        /// The work's number.
        let id: UInt64
        /// What the state was before this work (or the work it superseded) showed progress: restored
        /// when the work is cancelled or ends while still showing progress.
        let stateBefore: State
    }

    /// The state shown.
    private(set) var state: State
    /// The work allowed to write, if any.
    private(set) var current: Current?
    /// Bumped for each new state, so that a state stream can tell the latest.
    private(set) var version: UInt64 = 0
    private var lastID: UInt64 = 0

    init(_ state: State) {
        self.state = state
    }

    /// What a transition did.
    struct Outcome {
        /// The work that was stopped and must be cancelled, if any.
        var stopped: UInt64?
        /// Whether the state changed (observers must be told).
        var changed = false
    }

    /// Starts new work: stops the current one, and shows `progress` unless `nil` (a silent start).
    ///
    /// - Returns: The new work's number, and the outcome.
    mutating func start(showing progress: State?) -> (id: UInt64, outcome: Outcome) {
        lastID &+= 1
        let id = lastID
        var outcome = Outcome(stopped: current?.id)
        // Work that supersedes work still showing progress restores what was there before either.
        let before = current.map { state.isInProgress ? $0.stateBefore : state } ?? state
        current = Current(id: id, stateBefore: before)
        if let progress {
            set(progress)
            outcome.changed = true
        }
        return (id, outcome)
    }

    /// A write from work `id`: applied only when `id` is the current work.
    ///
    /// - Returns: Whether the state changed.
    mutating func write(_ new: State, from id: UInt64) -> Bool {
        guard current?.id == id else { return false }
        set(new)
        return true
    }

    /// Work `id` ended with `final` (`nil` when it ended without a state of its own, such as a streamed
    /// load that returned): applied only when `id` is the current work, which then is none. Work that
    /// ends still showing progress (a stream that yielded `.loading` last) restores the state before it.
    ///
    /// - Returns: Whether the state changed.
    mutating func finish(_ id: UInt64, with final: State?) -> Bool {
        guard let work = current, work.id == id else { return false }
        current = nil
        if let final {
            set(final)
            return true
        }
        guard state.isInProgress else { return false }
        set(work.stateBefore)
        return true
    }

    /// Stops the current work; a state still showing its progress goes back to what was there before.
    mutating func cancel() -> Outcome {
        guard let work = current else { return Outcome() }
        current = nil
        var outcome = Outcome(stopped: work.id)
        if state.isInProgress {
            set(work.stateBefore)
            outcome.changed = true
        }
        return outcome
    }

    /// Stops the current work and shows `initial` (a change only when the state was another one).
    mutating func reset(to initial: State) -> Outcome {
        let stopped = current?.id
        current = nil
        guard !state.isResetState else { return Outcome(stopped: stopped) }
        set(initial)
        return Outcome(stopped: stopped, changed: true)
    }

    /// Shows `new` as it is, leaving the current work running (a property its owner set directly).
    mutating func replace(with new: State) {
        set(new)
    }

    /// Whether `id` is the current work.
    func isCurrent(_ id: UInt64) -> Bool {
        current?.id == id
    }

    private mutating func set(_ new: State) {
        state = new
        version &+= 1
    }
}
