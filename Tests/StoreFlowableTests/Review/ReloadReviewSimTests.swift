import Foundation
import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// Random walks over ``KeyStateMachine`` with reloads from the cache (begin, the write turn, the mark a
/// reload must make when a flight was writing as it began, applied, failed or a no-op, a read of a cache
/// that something outside the manager changes at any moment, its report) among every other event:
/// updates, clears, invalidations, revalidations, fetches in every phase, streams and callers coming and
/// going. After each step the invariants of `KeyStateMachineSim+Invariants.swift` hold (one writer at a
/// time, a reload counting as one from its turn to its report; at most one origin call; the value of a
/// flight writing when a reload began is never valid in the cache once the reload marked it), and so do
/// those the simulator checks at each reload: a flight not yet writing is dropped and never writes, a
/// fresh read answers every waiter unless a flight started meanwhile, any other read leaves nobody
/// watching or waiting without a fetch, and every subscriber is told the key's state once. Once the work
/// runs out nobody is left waiting, loading or without a first state, and the key is idle.
///
/// Set `RELOAD_SIM_SEEDS` (and optionally `RELOAD_SIM_STEPS`) to run more seeds.
@Suite(
    "Reload review: machine random walks with reloads",
    .disabled(if: isRunningUnderThreadSanitizer, "single-threaded value code: nothing for ThreadSanitizer"))
struct ReloadReviewSimTests {
    static let seeds: [UInt64] = Array(1...24)

    @Test(arguments: seeds)
    func randomWalksWithReloadsKeepTheInvariants(seed: UInt64) {
        let coverage = Issue10MachineSimTests.walk(seed: seed &+ 10_000, steps: 2_000, reloads: true)
        #expect(coverage.reloadsDroppingFlights > 0, "no reload dropped a flight")
        #expect(coverage.queuedReloads > 0, "no reload waited for the turn")
        #expect(coverage.reloadsStartingAFetch > 0, "no reload started a fetch")
        #expect(coverage.reloadsOvertakenByAFlight > 0, "no flight started while a reload held the turn")
    }

    /// The rarer moments, over a few more walks: a reload arriving while a fetched value is being
    /// written (it must mark it), and a fresh read answering the callers of a dropped fetch.
    @Test func theRarerMomentsAreReached() {
        var total = MachineTest.Sim.Coverage()
        for seed in UInt64(20_000)..<20_008 {
            let coverage = Issue10MachineSimTests.walk(seed: seed, steps: 2_000, reloads: true)
            total.reloadsBehindASave += coverage.reloadsBehindASave
            total.reloadsAnsweringWaiters += coverage.reloadsAnsweringWaiters
        }
        #expect(total.reloadsBehindASave > 0, "no reload found a flight writing")
        #expect(total.reloadsAnsweringWaiters > 0, "no reload answered waiters")
    }

    /// The moment the random walks reach least often, as a scenario: a reload arrives while a fetched
    /// value is being written, so it must mark it; whatever the mark does (applied, thrown, or nothing, for
    /// a cache that keeps no mark), the value is never left as the key's fresh value: the subscriber and
    /// the waiter get a new fetch's.
    @Test(arguments: MachineTest.Sim.ReloadTask.Mark.allCases)
    func aReloadBehindASaveNeverLeavesTheSavedValueFresh(mark: MachineTest.Sim.ReloadTask.Mark) {
        var sim = MachineTest.Sim()
        sim.cache = ("old", false)
        let subscriber = sim.publish()
        let waiter = sim.request(.refresh)
        sim.completeFetch(0, with: .success("f0"))
        let (reload, mayReadNow) = sim.beginReload()
        #expect(!mayReadNow)
        sim.completeSave(0)
        sim.markReload(reload, mark)
        sim.finishReload(reload)
        #expect(sim.violations.isEmpty)
        #expect(sim.machine.flight != nil, "no refetch after a reload behind a save (\(mark))")
        sim.drain()
        #expect(sim.violations.isEmpty)
        #expect(sim.log.emissions[subscriber]?.last == .completed("f1"))
        #expect(waiter.map { sim.log.resolutions[$0] } == .value("f0"), "the waiter got the save's outcome first")
    }

    @Test func manySeedsWhenAsked() {
        let environment = ProcessInfo.processInfo.environment
        guard let count = environment["RELOAD_SIM_SEEDS"].flatMap({ UInt64($0) }) else { return }
        let steps = environment["RELOAD_SIM_STEPS"].flatMap { Int($0) } ?? 3_000
        for seed in 100_000..<(100_000 + count) {
            _ = Issue10MachineSimTests.walk(seed: seed, steps: steps, reloads: true)
        }
    }
}
