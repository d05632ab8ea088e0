import StoreFlowable
import StoreFlowableTesting

/// The loading-states part: a `LoadableController` load with a "taking longer" interrupt and a timeout,
/// on a clock the tour moves (its time printed on every line), then a load superseded by another whose
/// value alone is shown.
func showLoadingStates(_ checks: inout Checks) async {
    let clock = ManualClock()
    let report = LoadableController<String>(clock: clock)
    let hints = LockedHints()
    let workSawCancellation = LockedHints()
    print("report.load(interrupts: [.seconds(2)], timeout: .seconds(5), onInterrupt: showHint) { … }")
    let task = report.load(
        interrupts: [.seconds(2)], timeout: .seconds(5),
        onInterrupt: { elapsed in
            hints.add("taking longer than \(elapsed)")
        }
    ) {
        do {
            try await Task.sleep(for: .seconds(3_600))  // work that would take an hour
        } catch {
            workSawCancellation.add("cancelled")
            throw error
        }
        return "the report"
    }
    // Both timers (the interrupt's and the timeout's) are set before the clock moves.
    await clock.sleepers(atLeast: 2)
    print("  t=\(clock.now)  \(report.state)")
    checks.expect(report.state == .loading, "a started load shows loading")
    clock.advance(by: .seconds(2))
    await waitUntil { !hints.all.isEmpty }
    print("  t=\(clock.now)  interrupt: \(hints.all.joined())   state: \(report.state)")
    checks.expect(report.state == .loading, "an interrupt leaves the load running")
    clock.advance(by: .seconds(3))
    await task.value
    print("  t=\(clock.now)  \(report.state)")
    checks.expect(
        report.state == .error(TimeoutError(after: .seconds(5))), "the load should time out after 5 s")
    checks.expect(workSawCancellation.all == ["cancelled"], "the timed-out work should be cancelled")

    print()
    print("Two loads, the second started while the first runs: only the second's value is shown.")
    let search = LoadableController<String>()
    let first = search.load {
        try? await Task.sleep(for: .seconds(3_600))  // ignores its cancellation, returns anyway
        return "results for \"sto\""
    }
    await search.loadAndWait { "results for \"store\"" }
    await first.value
    print("  \(search.state)")
    checks.expect(search.state == .loaded("results for \"store\""), "only the current load writes")
}

/// Strings recorded from any task.
private final class LockedHints: Sendable {
    private let lines = LockedValue<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func add(_ line: String) { lines.withLock { $0.append(line) } }
}

/// Yields until `condition` holds (the interrupt runs in the load's task).
private func waitUntil(_ condition: () -> Bool) async {
    while !condition() { await Task.yield() }
}
