/// The interrupts of one unit of work: at each delay's deadline (the delays add up, counted from the
/// start of the work), `onInterrupt` runs with that deadline's time since the start, while the work goes
/// on. When it throws, the work is cancelled and the error ends it.
struct Interrupts: Sendable {
    let delays: [Duration]
    /// Sleeps until the given time after the start.
    let sleepUntil: @Sendable (Duration) async throws -> Void
    let onInterrupt: @Sendable (Duration) throws -> Void

    /// Interrupts after `delays` on `clock`, counted from now.
    init<C: Clock<Duration>>(
        delays: [Duration], clock: C, onInterrupt: @escaping @Sendable (Duration) throws -> Void
    ) {
        self.delays = delays
        let start = clock.now
        sleepUntil = { offset in try await clock.sleep(until: start.advanced(by: offset), tolerance: nil) }
        self.onInterrupt = onInterrupt
    }

    /// Sleeps to each deadline and runs the callback; returns the failure it threw, or `nil` when every
    /// deadline passed (or the sleep was cancelled: the work ended first). A deadline already past when
    /// the previous callback returns fires at once, so each interrupt fires at its own deadline however
    /// late the clock moved.
    /// An interrupt whose sleep ended after the work was stopped (`isCurrent` is then `false`, or the
    /// task cancelled) does not run its callback.
    func run<State>(while isCurrent: @Sendable () -> Bool) async -> WorkEnding<State>? {
        var accumulated = Duration.zero
        for delay in delays {
            accumulated += delay
            do {
                try await sleepUntil(accumulated)
            } catch {
                return nil
            }
            guard !Task.isCancelled, isCurrent() else { return nil }
            do {
                try onInterrupt(accumulated)
            } catch {
                return .failed(error)
            }
        }
        return nil
    }

    /// The interrupts of a unit of work: those of `delays` with `onInterrupt`, and a timeout that
    /// throws ``TimeoutError`` when `timeout` is set, all counted from now.
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
