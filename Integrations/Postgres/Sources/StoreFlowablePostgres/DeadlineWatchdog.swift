import PostgresNIO
import Synchronization

/// The deadlines of the operations that run under
/// ``withDeadline(_:watchdog:pastDeadlineAfterCancellation:_:)``, kept by one timer for them all instead
/// of one per operation.
///
/// A timer of its own per operation cost each statement two hand-offs to an event loop (scheduling the
/// timer from the caller's thread wakes the loop, and so does cancelling it), about a tenth of a store
/// hit. Here an operation's deadline is an entry in a table under a lock: registering it schedules a
/// timer only when none is scheduled or it is earlier than the one scheduled, and removing it cancels
/// nothing. A cache's operations share one timeout, so a later operation's deadline is never the
/// earliest: under a steady stream of statements the timer fires about once per timeout, finds the
/// operations it was set for long ended, and is set again for the oldest one still running. The
/// watchdog is the whole process's: with caches of different timeouts, an operation of a shorter one
/// that starts while only longer ones run is the earliest, and replaces the timer (two hand-offs, as
/// before); with every cache busy, the shortest timeout sets the pace.
///
/// Promises:
/// - An entry's action runs once, on the watchdog's event loop, at or after its deadline and as soon
///   after it as the loop runs the timer; never when the entry was removed first.
/// - ``remove(_:)`` and ``register(deadline:action:)`` never wait for an action, and never call one.
/// - With no entry, no timer is scheduled (the one scheduled for removed entries fires once, then none).
final class DeadlineWatchdog: Sendable {
    /// The watchdog of every cache in the process, on one event loop of NIO's shared group.
    static let shared = DeadlineWatchdog(eventLoop: MultiThreadedEventLoopGroup.singleton.next())

    /// An entry, for ``remove(_:)``.
    struct Entry: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Deadline {
        let time: NIODeadline
        let action: @Sendable () -> Void
    }

    private struct State {
        var nextID: UInt64 = 0
        var deadlines: [UInt64: Deadline] = [:]
        /// When the one timer that counts fires, if one is scheduled.
        var wake: NIODeadline?
        /// The count of the timer that counts: one that fires with an older count was replaced by an
        /// earlier one and does nothing.
        var generation: UInt64 = 0
        /// The timer that counts, to cancel when an earlier one replaces it.
        var timer: Scheduled<Void>?
        /// How many timers were scheduled (counted once `scheduleTask` returned), for the tests.
        var timersScheduled = 0
    }

    /// The loop the timer runs on.
    let eventLoop: any EventLoop
    /// The loop's time, which deadlines are measured on.
    let now: @Sendable () -> NIODeadline
    private let state = Mutex(State())

    /// Creates a watchdog whose timer runs on `eventLoop`.
    ///
    /// - Parameters:
    ///   - eventLoop: The loop of the timer and of the actions; it must outlive the entries (on a loop shut
    ///     down no timer runs, so no deadline passes).
    ///   - now: The loop's time (a testing loop has its own).
    init(eventLoop: any EventLoop, now: @escaping @Sendable () -> NIODeadline = { .now() }) {
        self.eventLoop = eventLoop
        self.now = now
    }

    /// How many timers the watchdog scheduled so far.
    var timersScheduled: Int { state.withLock { $0.timersScheduled } }

    /// How many entries wait for their deadline.
    var pendingCount: Int { state.withLock { $0.deadlines.count } }

    /// Runs `action` at `deadline`, unless ``remove(_:)`` removes the entry first.
    ///
    /// - Parameters:
    ///   - deadline: When, on the watchdog's clock; one already passed runs the action at once (on the
    ///     loop).
    ///   - action: What to run; it must not block the loop.
    /// - Returns: The entry.
    func register(deadline: NIODeadline, action: @escaping @Sendable () -> Void) -> Entry {
        let (entry, schedule) = state.withLock { state -> (Entry, Reschedule?) in
            let id = state.nextID
            state.nextID &+= 1
            state.deadlines[id] = Deadline(time: deadline, action: action)
            if let wake = state.wake, wake <= deadline { return (Entry(id: id), nil) }
            return (Entry(id: id), Self.replaceTimer(in: &state, wakingAt: deadline))
        }
        if let schedule { start(schedule) }
        return entry
    }

    /// Removes `entry`: its action will not run, unless it is already running or ran.
    ///
    /// - Parameter entry: The entry; removing it again does nothing.
    func remove(_ entry: Entry) {
        // Taken out of the lock before it is released: what the action holds may run code when it
        // goes (a `deinit`), which must not run under the lock (it may use the watchdog).
        let removed = state.withLock { state in state.deadlines.removeValue(forKey: entry.id) }
        withExtendedLifetime(removed) {}
    }

    /// A timer to schedule, decided under the lock and scheduled outside it.
    private struct Reschedule {
        let wake: NIODeadline
        let generation: UInt64
        let replaced: Scheduled<Void>?
    }

    private static func replaceTimer(in state: inout State, wakingAt wake: NIODeadline) -> Reschedule {
        state.generation &+= 1
        state.wake = wake
        defer { state.timer = nil }
        return Reschedule(wake: wake, generation: state.generation, replaced: state.timer)
    }

    private func start(_ schedule: Reschedule) {
        schedule.replaced?.cancel()
        let timer = eventLoop.scheduleTask(deadline: schedule.wake) { self.fire(generation: schedule.generation) }
        let isKept = state.withLock { state in
            // Counted once scheduled: a test that sees the count moves the loop's time only after
            // the timer is on it.
            state.timersScheduled += 1
            // Kept only while it is still the one that counts (it may already have fired or been
            // replaced by then).
            guard state.generation == schedule.generation, state.wake != nil else { return false }
            state.timer = timer
            return true
        }
        // Replaced before it was kept (the one that replaced it found no timer to cancel), or already
        // fired: cancelled here, else a replaced timer stays on the loop until its time, which for an
        // operation without timeout (`.seconds(.max)`) is 146 years. Cancelling one that fired or is
        // firing does nothing.
        if !isKept { timer.cancel() }
    }

    /// Runs the actions whose deadline passed, and sets the timer for the earliest one left.
    private func fire(generation: UInt64) {
        let now = now()
        let (due, schedule) = state.withLock { state -> ([@Sendable () -> Void], Reschedule?) in
            guard state.generation == generation else { return ([], nil) }
            state.timer = nil
            state.wake = nil
            var dueIDs: [UInt64] = []
            var earliest: NIODeadline?
            for (id, deadline) in state.deadlines {
                if deadline.time <= now {
                    dueIDs.append(id)
                } else if earliest.map({ deadline.time < $0 }) ?? true {
                    earliest = deadline.time
                }
            }
            let due = dueIDs.compactMap { state.deadlines.removeValue(forKey: $0)?.action }
            guard let earliest else { return (due, nil) }
            return (due, Self.replaceTimer(in: &state, wakingAt: earliest))
        }
        if let schedule { start(schedule) }
        for action in due { action() }
    }
}
