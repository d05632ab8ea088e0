/// The interrupts of one unit of work: after each delay (counted from the end of the previous one),
/// `onInterrupt` runs with the time since the work started, while the work goes on. When it throws, the
/// work is cancelled and the error ends it.
struct Interrupts: Sendable {
    let delays: [Duration]
    let clock: any Clock<Duration>
    let onInterrupt: @Sendable (Duration) throws -> Void

    /// Sleeps through the delays and runs the callback after each; returns the failure it threw, or
    /// `nil` when every delay passed (or the sleep was cancelled: the work ended first).
    func run<State>() async -> WorkEnding<State>? {
        var accumulated = Duration.zero
        for delay in delays {
            do {
                try await clock.sleep(for: delay)
            } catch {
                return nil
            }
            accumulated += delay
            do {
                try onInterrupt(accumulated)
            } catch {
                return .failed(error)
            }
        }
        return nil
    }

    /// The interrupts of a unit of work: those of `delays` with `onInterrupt`, and a timeout that
    /// throws ``TimeoutError`` when `timeout` is set.
    static func plan(
        _ delays: [Duration], _ timeout: Duration?, _ clock: any Clock<Duration>,
        _ onInterrupt: @escaping @Sendable (Duration) throws -> Void
    ) -> [Interrupts] {
        var plan: [Interrupts] = []
        if !delays.isEmpty { plan.append(Interrupts(delays: delays, clock: clock, onInterrupt: onInterrupt)) }
        if let timeout {
            plan.append(Interrupts(delays: [timeout], clock: clock) { throw TimeoutError(after: $0) })
        }
        return plan
    }
}
