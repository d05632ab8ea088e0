import StoreFlowableTesting
import Synchronization

/// A ``ManualClock`` that also records each sleep on it: how long it asked to sleep, and when it ended
/// (woken by ``advance(by:)``, or cancelled). A test learns from it which of the code's timers are
/// sleeping, and for how long each one asked, without waiting on a real clock.
final class SleepRecordingClock: Clock, Sendable {
    /// What happened to one sleep, named by the order in which the sleeps started (1 for the first).
    enum Sleep: Equatable, Sendable {
        /// Sleep `id` started, asking to sleep for `length` (from the clock's time then to its deadline).
        case started(id: Int, length: Duration)
        /// Sleep `id` ended: woken, or cancelled.
        case ended(id: Int)
    }

    /// The clock the sleeps run on, which the test advances.
    let manual = ManualClock()
    /// Every sleep's start and end, in order.
    let sleeps = Recorder<Sleep>()
    /// The number of the last sleep started.
    private let lastID = Mutex(0)

    /// The manual clock's time.
    var now: ManualClock.Instant { manual.now }

    /// The manual clock's resolution.
    var minimumResolution: Duration { manual.minimumResolution }

    /// Records the sleep, sleeps on the manual clock, and records its end.
    ///
    /// - Parameters:
    ///   - deadline: When to wake.
    ///   - tolerance: Passed on (the manual clock ignores it).
    /// - Throws: `CancellationError` when the sleeping task is cancelled.
    func sleep(until deadline: ManualClock.Instant, tolerance: Duration? = nil) async throws {
        let id = lastID.withLock { last in
            last += 1
            return last
        }
        sleeps.record(.started(id: id, length: manual.now.duration(to: deadline)))
        defer { sleeps.record(.ended(id: id)) }
        try await manual.sleep(until: deadline, tolerance: tolerance)
    }

    /// The lengths of the sleeps that started, by number, in the order they started.
    ///
    /// - Parameter sleeps: What ``sleeps`` recorded.
    /// - Returns: Each started sleep's number and length.
    static func started(_ sleeps: [Sleep]) -> [(id: Int, length: Duration)] {
        sleeps.compactMap { sleep in
            if case .started(let id, let length) = sleep { (id, length) } else { nil }
        }
    }

    /// The numbers of the sleeps that started and have not ended.
    ///
    /// - Parameter sleeps: What ``sleeps`` recorded.
    /// - Returns: The sleeping ones' numbers, in the order they started.
    static func sleeping(_ sleeps: [Sleep]) -> [Int] {
        let ended = Set(sleeps.compactMap { sleep in if case .ended(let id) = sleep { id } else { nil } })
        return started(sleeps).map(\.id).filter { !ended.contains($0) }
    }
}
