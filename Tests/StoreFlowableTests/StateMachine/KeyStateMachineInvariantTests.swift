import StoreFlowableTesting
import Testing

@testable import StoreFlowable

private typealias Sim = MachineTest.Sim

extension MachineTest {
    /// A small, seeded, platform-independent pseudo-random generator (SplitMix64), so that a failing
    /// sequence can be replayed from its seed.
    struct Random: RandomNumberGenerator {
        private var state: UInt64

        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        /// A number in `0..<bound`, without the modulo bias mattering for tests.
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

        /// `true` about once in `odds` draws.
        mutating func oneIn(_ odds: Int) -> Bool { below(odds) == 0 }

        mutating func pick<T: Comparable>(_ values: some Collection<T>) -> T? {
            let sorted = values.sorted()
            return sorted.isEmpty ? nil : sorted[below(sorted.count)]
        }
    }
}

/// Random event sequences: the invariants hold after every step (among them: one origin call at a time,
/// counting a cancelled call until its task reports; a pending flight only while one drains, started by the
/// drain report; status `.loading` iff a flight exists; every subscriber's first state from its own read, or
/// from a broadcast when a write in progress dropped its read, and no broadcast before it), nobody is left
/// loading, waiting or without a state once the work runs out, and the key is idle once everyone left
/// (unless it remembers an error).
@Suite(
    "KeyStateMachine: invariants",
    .disabled(if: isRunningUnderThreadSanitizer, "single-threaded value code: nothing for ThreadSanitizer"))
struct KeyStateMachineInvariantTests {
    static let seeds: [UInt64] = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89]
    static let steps = 3_000

    @Test(arguments: seeds)
    func randomEventSequencesKeepTheInvariants(seed: UInt64) {
        var random = MachineTest.Random(seed: seed)
        var sim = Sim()
        var trace: [String] = []
        for step in 0..<Self.steps {
            trace.append(Self.randomEvent(&sim, &random))
            if !sim.violations.isEmpty {
                Issue.record("seed \(seed), step \(step): \(sim.violations)\nlast events: \(trace.suffix(30))")
                return
            }
            if step % 25 == 0 {
                Self.expectQuiescenceLeavesNobodyLoading(sim, &random, seed: seed, step: step, trace: trace)
                Self.expectIdleOnceEveryoneLeft(sim, &random, seed: seed, step: step, trace: trace)
            }
        }
        #expect(trace.count == Self.steps)
        // The sequence went through the transitions of draining and of subscribers still reading.
        let coverage = sim.coverage
        #expect(coverage.heldBack > 0, "no flight was held back by a drain")
        #expect(coverage.startedAfterDrain > 0, "no drain report started a pending flight")
        #expect(coverage.forgotten > 0, "no pending flight was forgotten")
        #expect(coverage.drainReports > coverage.startedAfterDrain, "every drain report started a flight")
        #expect(coverage.staleReads > 0, "no read was overtaken by a write")
        #expect(coverage.droppedReads > 0, "no read was reported while a write was in progress")
    }

    /// Applies one random store event that is possible in the current state, and names it.
    private static func randomEvent(_ sim: inout Sim, _ random: inout MachineTest.Random) -> String {
        while true {
            switch random.below(13) {
            case 0 where sim.subscriberIDs.count < 4:
                return "attach \(sim.attach())"
            case 1:
                guard let subscriber = random.pick(sim.pendingReads.keys) else { continue }
                sim.readCache(subscriber)
                return "read \(subscriber)"
            case 2:
                guard let subscriber = random.pick(sim.pendingReads.keys) else { continue }
                let force = random.oneIn(4)
                sim.reportRead(subscriber, forceRefresh: force)
                return "report \(subscriber)\(force ? " force" : "")"
            case 3:
                guard let subscriber = random.pick(sim.subscriberIDs.keys) else { continue }
                sim.detach(subscriber)
                return "detach \(subscriber)"
            case 4...5 where sim.waiterIDs.count < 4:
                let read = MachineTest.Read.allCases[random.below(MachineTest.Read.allCases.count)]
                return "\(read) -> \(sim.request(read).map { String($0) } ?? "cache")"
            case 6:
                guard let waiter = random.pick(sim.waiterIDs.keys) else { continue }
                sim.cancel(waiter)
                return "cancel \(waiter)"
            case 7 where sim.updates.filter({ $0.stage != .finished }).count < 3:
                let value = random.oneIn(3) ? nil : "u\(random.below(100))"
                return "beginUpdate \(value ?? "nil") -> U\(sim.beginUpdate(value).index)"
            case 8:
                guard let update = sim.updates.first(where: { $0.stage == .writing }) else { continue }
                let fails = random.oneIn(4)
                sim.finishUpdate(update.index, failing: fails)
                return "finish U\(update.index)\(fails ? " failing" : "")"
            case 9:
                guard let flight = random.pick(sim.flights.filter { $0.stage == .fetching }.map(\.index)) else {
                    continue
                }
                // A cancelled flight's task reports back too: with the value, a failure, or a cancellation.
                let cancelled = sim.flights.contains { $0.index == flight && $0.cancelled }
                let failure: MachineTest.Failure? =
                    random.oneIn(4) ? .fetch : (cancelled && random.oneIn(2) ? .cancelled : nil)
                sim.completeFetch(flight, with: failure.map { .failure($0) } ?? .success("f\(flight)"))
                return "fetch F\(flight)\(cancelled ? " (draining)" : "")\(failure.map { " \($0.name)" } ?? "")"
            case 10:
                guard let flight = sim.flights.first(where: { if case .saving = $0.stage { true } else { false } })
                else { continue }
                let fails = random.oneIn(4)
                sim.completeSave(flight.index, failing: fails)
                return "save F\(flight.index)\(fails ? " failing" : "")"
            case 11:
                let states: [(String?, Bool)] = [(nil, false), ("external", true), ("external", false)]
                sim.cache = states[random.below(states.count)]
                return "cache := \(sim.cache)"
            case 12 where random.oneIn(5):
                sim.clearError()
                return "clearError"
            default:
                continue
            }
        }
    }

    /// Promise 3: once every task ran to its end, nobody waits and no subscriber is left on `.loading`.
    private static func expectQuiescenceLeavesNobodyLoading(
        _ sim: Sim, _ random: inout MachineTest.Random, seed: UInt64, step: Int, trace: [String]
    ) {
        var sim = sim
        for subscriber in sim.pendingReads.keys.sorted() { sim.reportRead(subscriber) }
        sim.drain(MachineTest.Outcome.allCases[random.below(3)])
        var problems = sim.violations
        if sim.machine.flight != nil { problems.append("a flight is left after draining") }
        if sim.machine.draining != nil { problems.append("the key still drains after every task reported") }
        if !sim.awaitingFirstState.isEmpty {
            problems.append("subscribers \(sim.awaitingFirstState.sorted()) never got their first state")
        }
        if !sim.waiterIDs.isEmpty { problems.append("waiters \(sim.waiterIDs.keys.sorted()) were never resolved") }
        for subscriber in sim.subscriberIDs.keys.sorted() {
            switch sim.log.emissions[subscriber]?.last {
            case nil: problems.append("subscriber \(subscriber) never received a state")
            case .loading?: problems.append("subscriber \(subscriber) is left loading")
            case .unexpected(let text)?: problems.append("subscriber \(subscriber) got \(text)")
            default: break
            }
        }
        if !problems.isEmpty {
            Issue.record("seed \(seed), after step \(step), draining: \(problems)\nlast events: \(trace.suffix(30))")
        }
    }

    /// Promises 7 and 9: once every subscriber and waiter left and the writes finished, the key is idle
    /// unless it remembers an error.
    private static func expectIdleOnceEveryoneLeft(
        _ sim: Sim, _ random: inout MachineTest.Random, seed: UInt64, step: Int, trace: [String]
    ) {
        var sim = sim
        for subscriber in sim.subscriberIDs.keys.sorted() { sim.detach(subscriber) }
        for waiter in sim.waiterIDs.keys.sorted() { sim.cancel(waiter) }
        let nobodyWaits = sim.machine.flight.map { $0.phase == .saving } ?? true
        sim.drain(MachineTest.Outcome.allCases[random.below(3)])
        var problems = sim.violations
        if !nobodyWaits { problems.append("a flight not yet saving outlived its audience") }
        if !sim.machine.isIdle, sim.machine.lastError == nil { problems.append("the key is not idle: \(sim.machine)") }
        sim.clearError()
        if !sim.machine.isIdle { problems.append("the key is not idle after clearing the error") }
        if !problems.isEmpty {
            Issue.record("seed \(seed), after step \(step), leaving: \(problems)\nlast events: \(trace.suffix(30))")
        }
    }
}
