import StoreFlowable
import Testing

/// ``ConcurrencyLimit`` end to end and under stress. Nothing here sleeps on the real clock: operations
/// are held at gates, and the tests poll the limit's counts, yielding between polls, until they change
/// (a hang is caught by the time limit).
@Suite("ConcurrencyLimit")
struct ConcurrencyLimitTests {
    @Test("An operation's value and error come back, and its permit is given back", .timeLimit(.minutes(1)))
    func valueAndError() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 2)
        let value = try await limit.run { 42 }
        #expect(value == 42)
        await #expect(throws: Failure.self) {
            try await limit.run { () async throws -> Int in throw Failure() }
        }
        #expect(limit.runningCount == 0)
        #expect(limit.queuedCount == 0)
    }

    @Test(
        "Operations run in the caller's isolation and may return values that are not Sendable",
        .timeLimit(.minutes(1)))
    @MainActor
    func nonSendableValues() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        let counter = NonSendableCounter()
        let result = try await limit.run {
            MainActor.assertIsolated()
            counter.value += 1
            return counter
        }
        #expect(result === counter)
        #expect(counter.value == 1)
    }

    @Test("An actor's operations may use its isolated state", .timeLimit(.minutes(1)))
    func actorIsolatedOperations() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 2)
        let account = Account()
        for _ in 0..<3 { try await account.deposit(through: limit) }
        #expect(await account.balance == 3)
        #expect(limit.runningCount == 0)
    }

    @Test("Limits below 1 count as 1", .timeLimit(.minutes(1)), arguments: [0, -1, Int.min])
    func limitClamp(maxConcurrent: Int) async throws {
        let limit = ConcurrencyLimit(maxConcurrent: maxConcurrent)
        #expect(limit.maxConcurrent == 1)
        let gate = Gate()
        let holder = Task { try await limit.run { await gate.wait() } }
        await gate.arrived()
        let waiter = Task { try await limit.run { 1 } }
        try await eventually { limit.queuedCount == 1 }
        #expect(limit.runningCount == 1)
        gate.open()
        try await holder.value
        #expect(try await waiter.value == 1)
        #expect(limit.runningCount == 0)
    }

    @Test(
        "1,000 callers arriving one by one run at most 8 at once, in arrival order, and all complete",
        .timeLimit(.minutes(1)))
    func fifoUnderLoad() async throws {
        let callers = 1_000
        let limit = ConcurrencyLimit(maxConcurrent: 8)
        let tracker = Tracker()
        let gates = (0..<callers).map { _ in Gate() }
        var tasks: [Task<Int, any Error>] = []
        for index in 0..<callers {
            tasks.append(
                Task {
                    try await limit.run {
                        tracker.enter(index)
                        await gates[index].wait()
                        tracker.leave()
                        return index
                    }
                })
            // Wait until this caller runs or is queued before the next one arrives.
            if index < 8 {
                try await eventually { tracker.startedCount == index + 1 }
            } else {
                try await eventually { limit.queuedCount == index - 7 }
            }
        }
        #expect(limit.runningCount == 8)
        #expect(limit.queuedCount == callers - 8)
        // Let the operations end one at a time, oldest first; each end lets exactly one queued caller
        // start, so the order they start in is the order the limit handed out its permits.
        for index in 0..<callers {
            gates[tracker.started[index]].open()
            let expectedStarts = min(index + 9, callers)
            try await eventually { tracker.startedCount == expectedStarts }
        }
        for (index, task) in tasks.enumerated() {
            #expect(try await task.value == index)
        }
        #expect(tracker.started == Array(0..<callers))
        #expect(tracker.peak == 8)
        #expect(tracker.finished == callers)
        #expect(limit.runningCount == 0)
        #expect(limit.queuedCount == 0)
    }

    @Test("1,000 callers arriving at once never run more than 8 operations at a time", .timeLimit(.minutes(3)))
    func contention() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 8)
        let tracker = Tracker()
        let completed = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<1_000 {
                group.addTask {
                    try await limit.run {
                        tracker.enter(index)
                        for _ in 0..<(index % 4) { await Task.yield() }
                        tracker.leave()
                        return 1
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(completed == 1_000)
        #expect(tracker.peak <= 8)
        #expect(tracker.peak >= 1)
        #expect(tracker.finished == 1_000)
        #expect(limit.runningCount == 0)
        #expect(limit.queuedCount == 0)
    }

    @Test(
        "Cancelled queued callers leave the queue at once and never run; the others all run",
        .timeLimit(.minutes(3)))
    func cancelQueued() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 2)
        let tracker = Tracker()
        let gate = Gate()
        defer { gate.open() }  // Also when a requirement fails, so that nothing waits forever.
        let holders = (0..<2).map { index in
            Task {
                try await limit.run {
                    tracker.enter(index)
                    await gate.wait()
                    tracker.leave()
                }
            }
        }
        try await eventually { tracker.startedCount == 2 }
        var waiters: [Task<Void, any Error>] = []
        for index in 2..<12 {
            waiters.append(
                Task {
                    try await limit.run { tracker.pass(index) }
                })
            try await eventually { limit.queuedCount == index - 1 }
        }
        let cancelled = Set([2, 3, 6, 9, 11])
        for index in cancelled { waiters[index - 2].cancel() }
        // Removed at once (the cancellation handlers ran inside `cancel()`), the permits still held.
        try #require(limit.queuedCount == 10 - cancelled.count)
        for index in cancelled {
            await #expect(throws: CancellationError.self) { try await waiters[index - 2].value }
        }
        #expect(limit.runningCount == 2)
        gate.open()
        for holder in holders { try await holder.value }
        for index in 2..<12 where !cancelled.contains(index) {
            try await waiters[index - 2].value
        }
        #expect(Set(tracker.started) == Set(0..<12).subtracting(cancelled))
        #expect(limit.runningCount == 0)
        #expect(limit.queuedCount == 0)
    }

    @Test("A caller cancelled before calling run throws at once and takes no permit", .timeLimit(.minutes(1)))
    func cancelledBeforeRun() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        let tracker = Tracker()
        // With a free permit, and with none free.
        for full in [false, true] {
            let gate = Gate()
            let holder: Task<Void, any Error>? = full ? Task { try await limit.run { await gate.wait() } } : nil
            if full { await gate.arrived() }
            let caller = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await limit.run { tracker.enter(0) }
            }
            await #expect(throws: CancellationError.self) { try await caller.value }
            #expect(limit.queuedCount == 0)
            #expect(limit.runningCount == (full ? 1 : 0))
            gate.open()
            try await holder?.value
        }
        #expect(tracker.startedCount == 0)
        #expect(limit.runningCount == 0)
    }

    @Test(
        "A caller cancelled while its operation runs gives its permit back when the operation ends",
        .timeLimit(.minutes(1)))
    func cancelWhileRunning() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        let started = Gate()
        let running = Task {
            try await limit.run {
                started.open()
                try await waitForCancellation()
            }
        }
        await started.wait()
        let next = Task { try await limit.run { 2 } }
        try await eventually { limit.queuedCount == 1 }
        running.cancel()
        await #expect(throws: CancellationError.self) { try await running.value }
        #expect(try await next.value == 2)
        #expect(limit.runningCount == 0)
        #expect(limit.queuedCount == 0)
    }

    @Test(
        "A caller cancelled just after the permit was handed to it passes the permit on without running",
        .timeLimit(.minutes(1)))
    @MainActor
    func cancelRightAfterHandOver() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        let tracker = Tracker()
        var waiter: Task<Void, any Error>?
        var follower: Task<Void, any Error>?
        // The test holds the permit itself. Its callers run on the main actor too, so a caller handed
        // the permit cannot resume before the test next suspends.
        try await limit.run {
            waiter = Task { @MainActor in
                try await limit.run { tracker.pass(1) }
            }
            try await eventually { limit.queuedCount == 1 }
            follower = Task { @MainActor in
                try await limit.run { tracker.pass(2) }
            }
            try await eventually { limit.queuedCount == 2 }
        }
        // The permit went to `waiter`, which has not resumed yet.
        #expect(limit.runningCount == 1)
        #expect(limit.queuedCount == 1)
        waiter?.cancel()
        await #expect(throws: CancellationError.self) { try await waiter?.value }
        try await follower?.value
        #expect(tracker.started == [2])
        #expect(limit.runningCount == 0)
        #expect(limit.queuedCount == 0)
    }

    @Test(
        "A caller cancelled as the permit is handed to it either runs or passes the permit on",
        .timeLimit(.minutes(3)))
    func cancelAtHandOver() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1)
        var outcomes = (ran: 0, cancelled: 0)
        for round in 0..<300 {
            let tracker = Tracker()
            let gate = Gate()
            let waiterBox = LockedValue<Task<Void, any Error>?>(nil)
            // Odd rounds: the holder cancels the waiter right after its release handed the permit on.
            let holder = Task {
                try await limit.run { await gate.wait() }
                if round.isMultiple(of: 2) == false { waiterBox.withLock { $0 }?.cancel() }
            }
            await gate.arrived()
            let waiter = Task {
                try await limit.run { tracker.pass(1) }
            }
            waiterBox.withLock { $0 = waiter }
            try await eventually { limit.queuedCount == 1 }
            let follower = Task {
                try await limit.run { tracker.pass(2) }
            }
            try await eventually { limit.queuedCount == 2 }
            // Even rounds: the holder's release and the waiter's cancellation race.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { gate.open() }
                if round.isMultiple(of: 2) { group.addTask { waiter.cancel() } }
            }
            try await holder.value
            switch await waiter.result {
            case .success:
                #expect(tracker.started.contains(1))
                outcomes.ran += 1
            case .failure(let error):
                #expect(error is CancellationError)
                #expect(!tracker.started.contains(1))
                outcomes.cancelled += 1
            }
            try await follower.value
            #expect(tracker.started.contains(2))
            #expect(limit.runningCount == 0)
            #expect(limit.queuedCount == 0)
        }
        #expect(outcomes.ran + outcomes.cancelled == 300)
    }

    @Test(
        "With a full queue, a caller is refused at once with a typed error and never runs",
        .timeLimit(.minutes(1)))
    func aFullQueueRefusesAtOnce() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 1, maxQueued: 1)
        #expect(limit.maxQueued == 1)
        let gate = Gate()
        let holder = Task { try await limit.run { await gate.wait() } }
        await gate.arrived()
        let waiter = Task { try await limit.run { 2 } }
        try await eventually { limit.queuedCount == 1 }
        let ran = LockedValue(false)
        await #expect(throws: ConcurrencyLimitError.queueFull(maxConcurrent: 1, maxQueued: 1)) {
            try await limit.run { ran.withLock { $0 = true } }
        }
        #expect(!ran.withLock { $0 })
        #expect(limit.runningCount == 1)
        #expect(limit.queuedCount == 1)
        gate.open()
        try await holder.value
        #expect(try await waiter.value == 2)
        // Nothing of the refused caller is left: the next callers run and queue as before.
        #expect(try await limit.run { 3 } == 3)
        #expect(limit.runningCount == 0)
        #expect(limit.queuedCount == 0)
    }

    @Test("A queue bound of 0 refuses whoever finds no free permit", .timeLimit(.minutes(1)))
    func aZeroQueueBoundOnlyRunsWhatFits() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 2, maxQueued: -5)
        #expect(limit.maxQueued == 0)
        let gate = Gate()
        let holders = (0..<2).map { _ in Task { try await limit.run { await gate.wait() } } }
        try await eventually { limit.runningCount == 2 }
        await #expect(throws: ConcurrencyLimitError.self) { try await limit.run { 1 } }
        #expect(limit.queuedCount == 0)
        gate.open()
        for holder in holders { try await holder.value }
        #expect(try await limit.run { 1 } == 1)
    }

    @Test(
        "1,000 callers at once against a bounded queue: at most 8 run and 16 wait, each runs or is refused, no permit lost",
        .timeLimit(.minutes(3)))
    func boundedQueueUnderContention() async throws {
        let limit = ConcurrencyLimit(maxConcurrent: 8, maxQueued: 16)
        let tracker = Tracker()
        let peakQueued = LockedValue(0)
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<1_000 {
                group.addTask {
                    do {
                        try await limit.run {
                            tracker.enter(index)
                            let queued = limit.queuedCount
                            peakQueued.withLock { $0 = max($0, queued) }
                            for _ in 0..<3 { await Task.yield() }
                            tracker.leave()
                        }
                        return true
                    } catch ConcurrencyLimitError.queueFull {
                        return false
                    }
                }
            }
            var outcomes: [Bool] = []
            for try await ran in group { outcomes.append(ran) }
            return outcomes
        }
        let ran = outcomes.filter { $0 }.count
        #expect(outcomes.count == 1_000)
        #expect(ran == tracker.finished)
        #expect(ran >= 8 + 16 || ran == 1_000)
        #expect(tracker.peak <= 8)
        #expect(peakQueued.withLock { $0 } <= 16)
        #expect(limit.runningCount == 0)
        #expect(limit.queuedCount == 0)
        // Every permit is still there.
        let gate = Gate()
        let holders = (0..<8).map { _ in Task { try await limit.run { await gate.wait() } } }
        try await eventually { limit.runningCount == 8 }
        gate.open()
        for holder in holders { try await holder.value }
    }

    @Test("Cancelling callers at every moment never loses or leaks a permit", .timeLimit(.minutes(3)))
    func cancelAtEveryMoment() async throws {
        let maxConcurrent = 3
        let limit = ConcurrencyLimit(maxConcurrent: maxConcurrent)
        let tracker = Tracker()
        var random = SplitMix64(seed: 0x5EED)
        for _ in 0..<200 {
            var tasks: [Task<Void, any Error>] = []
            var cancelAfterYields: [Int?] = []
            for index in 0..<10 {
                let moment = Int(random.next() % 8)
                let operationYields = Int(random.next() % 4)
                let throwsFailure = random.next() % 5 == 0
                let cancelFirst = moment == 0
                tasks.append(
                    Task {
                        if cancelFirst { withUnsafeCurrentTask { $0?.cancel() } }
                        try await limit.run {
                            tracker.enter(index)
                            for _ in 0..<operationYields { await Task.yield() }
                            tracker.leave()
                            if throwsFailure { throw Failure() }
                        }
                    })
                // Moments 1...6 cancel after that many yields of the test (queued, handed over or
                // running, as it happens); moment 7 never cancels.
                cancelAfterYields.append((1...6).contains(moment) ? moment : nil)
            }
            for yields in 0...6 {
                for (task, cancelAt) in zip(tasks, cancelAfterYields) where cancelAt == yields { task.cancel() }
                await Task.yield()
            }
            for task in tasks {
                switch await task.result {
                case .success: break
                case .failure(let error): #expect(error is CancellationError || error is Failure)
                }
            }
            #expect(limit.runningCount == 0)
            #expect(limit.queuedCount == 0)
        }
        #expect(tracker.peak <= maxConcurrent)
        #expect(tracker.current == 0)

        // Every permit is still there: `maxConcurrent` callers run at once.
        let gate = Gate()
        let all = Tracker()
        let holders = (0..<maxConcurrent).map { index in
            Task {
                try await limit.run {
                    all.enter(index)
                    await gate.wait()
                    all.leave()
                }
            }
        }
        try await eventually { all.startedCount == maxConcurrent }
        #expect(limit.runningCount == maxConcurrent)
        #expect(limit.queuedCount == 0)
        gate.open()
        for holder in holders { try await holder.value }
        #expect(limit.runningCount == 0)
    }
}

/// An error an operation throws.
private struct Failure: Error {}

/// An actor whose operations run through a limit and change its isolated state.
private actor Account {
    var balance = 0

    /// Adds 1 to the balance inside an operation of `limit`, returning a value that is not `Sendable`.
    func deposit(through limit: ConcurrencyLimit) async throws {
        let counter = try await limit.run {
            balance += 1
            return NonSendableCounter()
        }
        counter.value = balance
    }
}

/// A reference type that is not `Sendable`.
private final class NonSendableCounter {
    var value = 0
}

/// Counts the operations running at once and records the order they started in.
private final class Tracker: Sendable {
    private struct Counts {
        var current = 0
        var peak = 0
        var started: [Int] = []
        var finished = 0
    }

    private let counts = LockedValue(Counts())

    /// An operation starts.
    func enter(_ index: Int) {
        counts.withLock { counts in
            counts.current += 1
            counts.peak = max(counts.peak, counts.current)
            counts.started.append(index)
        }
    }

    /// An operation starts and ends at once.
    func pass(_ index: Int) {
        enter(index)
        leave()
    }

    /// An operation ends.
    func leave() {
        counts.withLock { counts in
            counts.current -= 1
            counts.finished += 1
        }
    }

    /// How many operations started.
    var startedCount: Int { counts.withLock { $0.started.count } }
    /// The operations' indices in the order they started.
    var started: [Int] { counts.withLock { $0.started } }
    /// How many operations run now.
    var current: Int { counts.withLock { $0.current } }
    /// The most operations that ran at once.
    var peak: Int { counts.withLock { $0.peak } }
    /// How many operations ended.
    var finished: Int { counts.withLock { $0.finished } }
}

/// Returns once `condition` holds, yielding between checks (never sleeping on a clock).
///
/// - Throws: `CancellationError` when the test is cancelled first (its time limit passed), so that a
///   broken limit fails the test instead of hanging it.
private func eventually(isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool) async throws {
    while !condition() {
        try Task.checkCancellation()
        await Task.yield()
    }
}

/// Waits until the current task is cancelled, then throws `CancellationError`.
private func waitForCancellation() async throws {
    let gate = Gate()
    await withTaskCancellationHandler {
        await gate.wait()
    } onCancel: {
        gate.open()
    }
    throw CancellationError()
}
