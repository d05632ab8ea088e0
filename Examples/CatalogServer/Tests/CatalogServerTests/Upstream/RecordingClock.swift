/// A clock whose `sleep` returns at once and records how long it was asked to wait, so that a test can
/// check the upstream's injected latency without waiting for it.
struct RecordingClock: Clock {
    /// An instant of the clock: a duration since its start.
    struct Instant: InstantProtocol {
        /// The time since the clock's start.
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    /// The waits asked for, in order.
    actor Record {
        /// The durations asked for.
        private(set) var waits: [Duration] = []

        /// Records one wait.
        func add(_ wait: Duration) { waits.append(wait) }
    }

    /// The waits asked for so far.
    let record = Record()

    /// Always the start: the clock never moves, so each wait is measured from it.
    var now: Instant { Instant(offset: .zero) }
    /// The clock's resolution.
    var minimumResolution: Duration { .nanoseconds(1) }

    /// Records the wait until `deadline`, and returns at once.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        await record.add(now.duration(to: deadline))
    }
}
