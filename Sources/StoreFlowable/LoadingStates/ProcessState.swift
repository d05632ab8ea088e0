/// The state of a process that is run on demand (saving, deleting, syncing): idle, running, failed or
/// finished, each with the kind of process it is about.
///
/// `Kind` tells apart the processes one object runs (an enum such as `case save, delete`). For an
/// object that runs only one, use ``SingleProcess``: `ProcessState<SingleProcess>` has the shorthands
/// ``running``, ``finished`` and ``failed(_:)``.
///
/// The seed library Processed's `ProcessState`, with the same cases and names.
public enum ProcessState<Kind> {
    /// No process ran yet, or the state was reset.
    case idle
    /// This process is running.
    case running(Kind)
    /// This process failed with this error.
    case failed(process: Kind, error: any Error)
    /// This process finished.
    case finished(Kind)

    /// Whether the state is ``idle``.
    public var isIdle: Bool {
        if case .idle = self { return true }
        return false
    }

    /// Whether a process is running.
    public var isRunning: Bool {
        if case .running = self { return true }
        return false
    }

    /// Whether the last process failed.
    public var hasFailed: Bool {
        if case .failed = self { return true }
        return false
    }

    /// Whether the last process finished.
    public var hasFinished: Bool {
        if case .finished = self { return true }
        return false
    }

    /// The process the state is about, or `nil` when ``idle``.
    public var process: Kind? {
        switch self {
        case .idle: nil
        case .running(let kind), .finished(let kind), .failed(let kind, _): kind
        }
    }

    /// The error of a failed process, or `nil` in every other state.
    public var error: (any Error)? {
        if case .failed(_, let error) = self { return error }
        return nil
    }
}

extension ProcessState where Kind: Equatable {
    /// Whether `kind` is running.
    ///
    /// - Parameter kind: A process.
    /// - Returns: `true` when the state is ``running(_:)`` with `kind`.
    public func isRunning(_ kind: Kind) -> Bool {
        if case .running(let running) = self { return running == kind }
        return false
    }

    /// Whether `kind` failed.
    ///
    /// - Parameter kind: A process.
    /// - Returns: `true` when the state is ``failed(process:error:)`` with `kind`.
    public func hasFailed(_ kind: Kind) -> Bool {
        if case .failed(let failed, _) = self { return failed == kind }
        return false
    }

    /// Whether `kind` finished.
    ///
    /// - Parameter kind: A process.
    /// - Returns: `true` when the state is ``finished(_:)`` with `kind`.
    public func hasFinished(_ kind: Kind) -> Bool {
        if case .finished(let finished) = self { return finished == kind }
        return false
    }
}

extension ProcessState: Sendable where Kind: Sendable {}

extension ProcessState: Equatable where Kind: Equatable {
    /// Whether two states are the same case with equal processes and errors; errors compare as in
    /// ``LoadableState``'s `==` (same type and equal, by `==` or by their reflected description).
    ///
    /// - Parameters:
    ///   - lhs: A state.
    ///   - rhs: Another state.
    /// - Returns: Whether they are equal.
    public static func == (lhs: ProcessState, rhs: ProcessState) -> Bool {
        switch (lhs, rhs) {
        case (.idle, .idle): true
        case (.running(let left), .running(let right)), (.finished(let left), .finished(let right)): left == right
        case (.failed(let left, let leftError), .failed(let right, let rightError)):
            left == right && errorsAreEqual(leftError, rightError)
        default: false
        }
    }
}

/// The kind of process of an object that runs only one: `ProcessState<SingleProcess>`.
public struct SingleProcess: Hashable, Sendable, CustomStringConvertible {
    /// The one process.
    public init() {}

    /// `"process"`.
    public var description: String { "process" }
}

extension ProcessState where Kind == SingleProcess {
    /// The process is running.
    public static var running: ProcessState { .running(SingleProcess()) }

    /// The process finished.
    public static var finished: ProcessState { .finished(SingleProcess()) }

    /// The process failed with `error`.
    ///
    /// - Parameter error: Why it failed.
    /// - Returns: The failed state.
    public static func failed(_ error: any Error) -> ProcessState {
        .failed(process: SingleProcess(), error: error)
    }
}
