/// The answer to "may the current task wait for this key?", asked before every wait the store makes on
/// a caller's behalf.
///
/// Outside every callback the answer is always yes and nothing is recorded. Inside a callback of a key,
/// a wait that could never end (see ``WaitGraph``) is refused, and any other wait is recorded until it
/// ends.
enum WaitPermit: Sendable {
    /// The task runs no callback of the library: it may wait, and nothing was recorded.
    case outsideCallbacks
    /// The wait is allowed and recorded; call ``end()`` when it ends.
    case recorded(from: WaitNode, to: WaitNode)
    /// The wait is allowed without being recorded: a key's own fetch waiting for its key's write turn,
    /// which the fetch does not hold.
    case allowed
    /// The wait could never end.
    case refused

    /// Asks whether the current task may wait for the fetch, a page, the refresh or the next streamed
    /// state of `target`.
    ///
    /// Refused from inside any callback of `target` itself (its fetch or its cache write), and from
    /// inside a callback of a key that `target`'s callbacks are waiting for.
    ///
    /// - Parameter target: The key whose fetch or page would be waited for.
    static func forFetch(of target: @autoclosure () -> WaitNode) -> WaitPermit {
        guard let scope = CallbackScope.current else { return .outsideCallbacks }
        return record(from: scope.node, to: target())
    }

    /// Asks whether the current task may wait for the write turn of `target` (an update or a clear).
    ///
    /// Allowed from inside `target`'s own fetch (the fetch does not hold the write turn, and the update
    /// supersedes it); refused from inside `target`'s own cache write (which holds the turn), and from
    /// inside a callback of a key that `target`'s callbacks are waiting for.
    ///
    /// - Parameter target: The key whose write turn would be waited for.
    static func forWrite(of target: @autoclosure () -> WaitNode) -> WaitPermit {
        guard let scope = CallbackScope.current else { return .outsideCallbacks }
        let target = target()
        if scope.node == target { return scope.role == .fetch ? .allowed : .refused }
        return record(from: scope.node, to: target)
    }

    private static func record(from: WaitNode, to: WaitNode) -> WaitPermit {
        WaitGraph.begin(from: from, to: to) ? .recorded(from: from, to: to) : .refused
    }

    /// Whether the wait was refused.
    var isRefused: Bool {
        if case .refused = self { return true }
        return false
    }

    /// Removes the recorded wait, if any.
    func end() {
        if case .recorded(let from, let to) = self { WaitGraph.end(from: from, to: to) }
    }
}
