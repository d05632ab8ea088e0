/// Waits, on the main actor, until `condition` holds, letting other main-actor work run between checks.
/// Bounded by the test's `.timeLimit`: it gives up when the test is cancelled.
@MainActor
func eventuallyOnMain(_ condition: () -> Bool) async {
    while !Task.isCancelled, !condition() {
        await Task.yield()
    }
}

/// Waits, on the main actor, until the async `condition` holds, yielding between checks. Bounded by the
/// test's `.timeLimit`: it gives up when the test is cancelled.
@MainActor
func eventuallyOnMain(_ condition: @MainActor () async -> Bool) async {
    while !Task.isCancelled, !(await condition()) {
        await Task.yield()
    }
}
