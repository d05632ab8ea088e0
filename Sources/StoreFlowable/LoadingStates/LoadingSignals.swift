/// Thrown from inside a load to cancel it: the load ends as if ``LoadableController/cancel()`` had been
/// called (nothing it produced is shown, and a `.loading` state goes back to what was there before).
///
/// The seed library Processed's `CancelLoadable`, with the same name.
public struct CancelLoadable: Error, Sendable, Equatable {
    /// Creates the signal.
    public init() {}
}

/// Thrown from inside a load to reset: the load ends as if ``LoadableController/reset()`` had been
/// called (the state becomes ``LoadableState/absent``).
///
/// The seed library Processed's `ResetLoadable`, with the same name.
public struct ResetLoadable: Error, Sendable, Equatable {
    /// Creates the signal.
    public init() {}
}

/// Thrown from inside a process to cancel it: the process ends as if ``ProcessController/cancel()`` had
/// been called.
///
/// The seed library Processed's `CancelProcess`, with the same name.
public struct CancelProcess: Error, Sendable, Equatable {
    /// Creates the signal.
    public init() {}
}

/// Thrown from inside a process to reset: the process ends as if ``ProcessController/reset()`` had been
/// called (the state becomes ``ProcessState/idle``).
///
/// The seed library Processed's `ResetProcess`, with the same name.
public struct ResetProcess: Error, Sendable, Equatable {
    /// Creates the signal.
    public init() {}
}

/// The error of work that ran longer than its timeout (the `timeout:` of a load or a process).
public struct TimeoutError: Error, Sendable, Equatable, CustomStringConvertible {
    /// How long the work had run when it timed out.
    public let after: Duration

    /// Creates the error of work that timed out after `after`.
    ///
    /// - Parameter after: How long the work had run.
    public init(after: Duration) {
        self.after = after
    }

    /// "timed out after 5.0 seconds".
    public var description: String { "timed out after \(after)" }
}
