/// A condition a test waited for did not come true in time.
struct ConditionTimedOut: Error, CustomStringConvertible {
    /// What was waited for.
    let what: String

    var description: String { "timed out waiting until \(what)" }
}

/// Waits until `condition` holds, checking it every few milliseconds, for at most `timeout`.
///
/// For state that another task or process changes without telling (a count on a server, a gauge):
/// the test goes on the moment it holds, and fails with what it waited for when it never does.
///
/// - Parameters:
///   - what: What is waited for, for the failure's message.
///   - timeout: The longest wait.
///   - condition: Checked until it returns `true`.
/// - Throws: ``ConditionTimedOut``; what `condition` throws.
func waitUntil(
    _ what: String, timeout: Duration = .seconds(20), _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw ConditionTimedOut(what: what) }
        try await Task.sleep(for: .milliseconds(5))
    }
}
