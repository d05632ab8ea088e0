/// The error ``StateRecorder``'s waiting methods throw when the state they wait for does not come.
///
/// Its ``description`` lists the states the recorder had seen, so a failing test shows what the
/// stream did instead.
public struct StateRecorderError: Error, Sendable, CustomStringConvertible {
    /// Why the wait ended without its predicate being met.
    public enum Reason: Sendable, Equatable {
        /// The timeout passed on the recorder's clock.
        ///
        /// - Parameter after: The timeout the wait was given.
        case timedOut(after: Duration)
        /// The stream finished (or the recorder was cancelled), so no further state can come.
        case streamFinished
    }

    /// Why the wait ended.
    public let reason: Reason

    /// The states the recorder had seen when the wait ended, oldest first, each described as
    /// `.loading(…)`, `.completed(…)` or `.error(…)`.
    public let states: [String]

    /// Creates the error.
    ///
    /// - Parameters:
    ///   - reason: Why the wait ended.
    ///   - states: Descriptions of the states seen, oldest first.
    public init(reason: Reason, states: [String]) {
        self.reason = reason
        self.states = states
    }

    /// Whether the wait ended because its timeout passed.
    public var isTimeout: Bool {
        if case .timedOut = reason { return true }
        return false
    }

    /// A one-line description naming the reason and the states seen (the last 20 of them, when there
    /// were more).
    public var description: String {
        let shown = states.suffix(20)
        let omitted = states.count - shown.count
        let seen = (omitted > 0 ? "[… \(omitted) earlier, " : "[") + shown.joined(separator: ", ") + "]"
        switch reason {
        case .timedOut(let timeout):
            return "StateRecorderError: timed out after \(timeout); states seen: \(seen)"
        case .streamFinished:
            return "StateRecorderError: the stream finished first; states seen: \(seen)"
        }
    }
}
