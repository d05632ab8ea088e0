import StoreFlowable
import StoreFlowableTesting
import Testing

/// An error with a readable description, private to this file.
private struct TierFailure: Error, Equatable, CustomStringConvertible {
    let name: String
    var description: String { name }
}

@Suite struct TieredCacheTests {
    typealias Tier = TestKeyedCache<Int, String>

    private let clock = ManualCacheClock()
    private let policy = FreshnessPolicy(freshFor: .seconds(10), maxAge: .seconds(60))

    /// An entry stored `secondsAgo` seconds before the clock's current time.
    private func entry(_ value: String, secondsAgo: Int64 = 0, invalidated: Bool = false) -> CacheEntry<String> {
        CacheEntry(
            value: value, storedAt: clock.now.advanced(by: .seconds(-secondsAgo)), isInvalidated: invalidated)
    }

    /// Two empty tiers with the system clock and no policy of their own, and the tiered cache over them
    /// with this suite's policy and clock.
    private func makeTiers() -> (front: Tier, back: Tier, cache: TieredCache<Tier, Tier>) {
        let front = Tier()
        let back = Tier()
        return (front, back, TieredCache(front: front, back: back, policy: policy, clock: clock))
    }

    // MARK: Policy and clock

    @Test func policyAndClockDefaultToTheBackTiers() {
        let backClock = ManualCacheClock(CacheTime(nanosecondsSince1970: 42))
        let back = Tier(policy: policy, clock: backClock)
        let cache = TieredCache(front: Tier(), back: back)
        #expect(cache.policy == policy)
        #expect(cache.clock.now == backClock.now)
        let explicit = TieredCache(front: Tier(), back: back, policy: .alwaysFetch, clock: clock)
        #expect(explicit.policy == .alwaysFetch)
        #expect(explicit.clock.now == clock.now)
    }

    // MARK: Read-through

    @Test(.timeLimit(.minutes(1)))
    func frontHitIsReturnedWithoutReadingTheBack() async throws {
        let (front, back, cache) = makeTiers()
        front[1] = entry("front", secondsAgo: 5)
        back[1] = entry("back", secondsAgo: 1)
        #expect(try await cache.entry(forKey: 1) == entry("front", secondsAgo: 5))
        #expect(back.readCount == 0)
        #expect(front.writeAttemptCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func slowTierHitKeepsItsOriginalTimestamp() async throws {
        let (front, back, cache) = makeTiers()
        let original = entry("saved", secondsAgo: 30, invalidated: true)
        back[1] = original
        clock.advance(by: .seconds(5))
        let read = try await cache.entry(forKey: 1)
        #expect(read == original, "returned with its original storedAt and mark")
        #expect(front[1] == original, "copied to the front unchanged, not stamped now")
        #expect(front.writes(forKey: 1) == [original])
        #expect(back.writeAttemptCount == 0, "a read never writes the back")
        // The copy is now a front hit, still 35 s old.
        #expect(try await cache.entry(forKey: 1) == original)
        #expect(back.readCount == 1)
        let stored = try #require(read)
        #expect(cache.freshness(of: stored) == .stale)
    }

    @Test(.timeLimit(.minutes(1)))
    func missInBothTiersReturnsNilAndWritesNothing() async throws {
        let (front, back, cache) = makeTiers()
        #expect(try await cache.entry(forKey: 1) == nil)
        #expect(front.readCount == 1)
        #expect(back.readCount == 1)
        #expect(front.writeAttemptCount == 0)
    }

    // MARK: Expiry

    @Test(.timeLimit(.minutes(1)))
    func entriesPastTheTiersLifetimeAreNotServedFromEitherTier() async throws {
        let (front, back, cache) = makeTiers()
        let old = entry("old", secondsAgo: 59)
        front[1] = old
        back[1] = old
        #expect(try await cache.entry(forKey: 1) == old, "59 s old: inside maxAge")
        clock.advance(by: .seconds(1))
        // The front's own policy keeps entries for ever; the tiered cache's policy decides.
        #expect(try await cache.entry(forKey: 1) == nil, "60 s old: expired in both tiers")
        #expect(back.readCount == 1, "an expired front entry is a front miss")
        #expect(front.writeAttemptCount == 0, "an expired back entry is not copied")
        #expect(back[1] == old, "reads never remove")
    }

    @Test(.timeLimit(.minutes(1)))
    func anExpiredFrontEntryIsReplacedByTheBacksNewerOne() async throws {
        let (front, back, cache) = makeTiers()
        front[1] = entry("old", secondsAgo: 61)
        back[1] = entry("newer", secondsAgo: 2)
        #expect(try await cache.entry(forKey: 1) == entry("newer", secondsAgo: 2))
        #expect(front[1] == entry("newer", secondsAgo: 2))
    }

    // MARK: Write-through

    @Test(.timeLimit(.minutes(1)))
    func writeThroughWritesTheBackFirstThenTheFront() async throws {
        let (front, back, cache) = makeTiers()
        let new = entry("new")
        back.holdWrites()
        let write = Task { try await cache.setEntry(new, forKey: 1) }
        await back.waitForWriteAttempts(1)
        #expect(front.writeAttemptCount == 0, "the front waits for the back")
        back.releaseWrites()
        try await write.value
        #expect(back.writes(forKey: 1) == [new])
        #expect(front.writes(forKey: 1) == [new])
        #expect(try await cache.entry(forKey: 1) == new)
        #expect(back.readCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func backWriteFailureThrowsAndRemovesTheFrontEntry() async throws {
        let (front, back, cache) = makeTiers()
        front[1] = entry("old")
        back[1] = entry("old")
        back.failWrites(with: TierFailure(name: "disk full"))
        await #expect(throws: TierFailure(name: "disk full")) {
            try await cache.setEntry(self.entry("new"), forKey: 1)
        }
        #expect(front[1] == nil, "the front is never newer than the back")
        #expect(front.writeCount == 0)
        #expect(back[1] == entry("old"))
        back.failWrites(with: nil)
        #expect(try await cache.entry(forKey: 1) == entry("old"), "the next read goes to the back")
        #expect(front[1] == entry("old"))
    }

    @Test(.timeLimit(.minutes(1)))
    func frontWriteFailureRemovesTheFrontEntryAndSucceeds() async throws {
        let base = Tier([1: entry("old")])
        let front = FailingSets(base: base)
        let back = Tier([1: entry("old")])
        let cache = TieredCache(front: front, back: back, policy: policy, clock: clock)
        try await cache.setEntry(entry("new"), forKey: 1)
        #expect(back[1] == entry("new"))
        #expect(base[1] == nil, "the front's older entry is removed")
        #expect(try await cache.entry(forKey: 1) == entry("new"))
    }

    @Test(.timeLimit(.minutes(1)))
    func frontWriteAndRemovalFailuresThrowTheFrontsError() async throws {
        let (front, back, cache) = makeTiers()
        front[1] = entry("old")
        front.failWrites(with: TierFailure(name: "front broken"))
        await #expect(throws: TierFailure(name: "front broken")) {
            try await cache.setEntry(self.entry("new"), forKey: 1)
        }
        #expect(back[1] == entry("new"), "the back, written first, keeps the entry")
        #expect(front.writeAttemptCount == 2, "a write, then a removal")
    }

    // MARK: Removal and invalidation

    @Test(.timeLimit(.minutes(1)))
    func removalReachesBothTiers() async throws {
        let (front, back, cache) = makeTiers()
        front[1] = entry("one")
        back[1] = entry("one")
        back[2] = entry("two")
        try await cache.removeEntry(forKey: 1)
        #expect(front[1] == nil)
        #expect(back[1] == nil)
        #expect(back[2] == entry("two"))
        #expect(front.removedKeys == [1])
        #expect(back.removedKeys == [1])
        #expect(try await cache.entry(forKey: 1) == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func invalidationReachesBothTiersAndKeepsTheTimestamps() async throws {
        let (front, back, cache) = makeTiers()
        front[1] = entry("one", secondsAgo: 3)
        back[1] = entry("one", secondsAgo: 3)
        try await cache.invalidateEntry(forKey: 1)
        #expect(front[1] == entry("one", secondsAgo: 3, invalidated: true))
        #expect(back[1] == entry("one", secondsAgo: 3, invalidated: true))
        let read = try #require(try await cache.entry(forKey: 1))
        #expect(cache.freshness(of: read) == .stale)
    }

    @Test(.timeLimit(.minutes(1)))
    func predicateInvalidationReachesBothTiers() async throws {
        let (front, back, cache) = makeTiers()
        for key in 1...4 {
            back[key] = entry("\(key)")
            if key.isMultiple(of: 2) { front[key] = entry("\(key)") }
        }
        try await cache.invalidateEntries { $0 >= 2 }
        #expect(back[1] == entry("1"))
        for key in 2...4 { #expect(back[key] == entry("\(key)", invalidated: true)) }
        #expect(front[2] == entry("2", invalidated: true))
        #expect(front[4] == entry("4", invalidated: true))
        #expect(front[3] == nil, "invalidation stores nothing new")
        #expect(front.predicateInvalidationCount == 1)
        #expect(back.predicateInvalidationCount == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func removeAllReachesBothTiers() async throws {
        let (front, back, cache) = makeTiers()
        front[1] = entry("one")
        back[1] = entry("one")
        back[2] = entry("two")
        try await cache.removeAllEntries()
        #expect(front.entries.isEmpty)
        #expect(back.entries.isEmpty)
        #expect(front.removeAllCount == 1)
        #expect(back.removeAllCount == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func aFailingBackStillLetsTheFrontBeChanged() async throws {
        let (front, back, cache) = makeTiers()
        front[1] = entry("one")
        back[1] = entry("one")
        back.failWrites(with: TierFailure(name: "back"))
        await #expect(throws: TierFailure(name: "back")) { try await cache.removeEntry(forKey: 1) }
        #expect(front[1] == nil)
        front[1] = entry("one")
        await #expect(throws: TierFailure(name: "back")) { try await cache.invalidateEntry(forKey: 1) }
        #expect(front[1] == entry("one", invalidated: true))
        await #expect(throws: TierFailure(name: "back")) { try await cache.removeAllEntries() }
        #expect(front.entries.isEmpty)
        front.failWrites(with: TierFailure(name: "front"))
        await #expect(throws: TierFailure(name: "back"), "the back's error comes first") {
            try await cache.invalidateEntries { _ in true }
        }
        back.failWrites(with: nil)
        await #expect(throws: TierFailure(name: "front")) { try await cache.removeEntry(forKey: 1) }
        #expect(back[1] == nil, "the back was changed")
    }

    // MARK: Read failures

    @Test(.timeLimit(.minutes(1)))
    func frontReadFailureCountsAsAMiss() async throws {
        let (front, back, cache) = makeTiers()
        front.failReads(with: TierFailure(name: "front unreadable"))
        back[1] = entry("back", secondsAgo: 4)
        #expect(try await cache.entry(forKey: 1) == entry("back", secondsAgo: 4))
        #expect(front[1] == entry("back", secondsAgo: 4), "refilled from the back")
    }

    @Test(.timeLimit(.minutes(1)))
    func backReadFailureThrowsOnAFrontMiss() async throws {
        let (front, back, cache) = makeTiers()
        back.failReads(with: TierFailure(name: "back unreadable"))
        await #expect(throws: TierFailure(name: "back unreadable")) { try await cache.entry(forKey: 1) }
        front[1] = entry("front")
        #expect(try await cache.entry(forKey: 1) == entry("front"), "a front hit never reads the back")
    }

    @Test(.timeLimit(.minutes(1)))
    func failingCopyToTheFrontIsIgnored() async throws {
        let (front, back, cache) = makeTiers()
        front.failWrites(with: TierFailure(name: "front full"))
        back[1] = entry("back")
        #expect(try await cache.entry(forKey: 1) == entry("back"))
        #expect(front[1] == nil)
    }

    // MARK: Restart

    @Test(.timeLimit(.minutes(1)))
    func newFrontOverTheSameBackServesTheOriginalEntries() async throws {
        let back = Tier()
        let before = TieredCache(front: Tier(), back: back, policy: policy, clock: clock)
        try await before.setEntry(entry("saved"), forKey: 1)
        let saved = entry("saved")
        clock.advance(by: .seconds(30))
        // The process restarts: the memory tier is new and empty, the disk tier is the same.
        let front = Tier()
        let after = TieredCache(front: front, back: back, policy: policy, clock: clock)
        let read = try #require(try await after.entry(forKey: 1))
        #expect(read == saved, "30 s old, as saved before the restart")
        #expect(front[1] == saved)
        #expect(after.freshness(of: read) == .stale)
        clock.advance(by: .seconds(30))
        #expect(try await after.entry(forKey: 1) == nil, "60 s old: expired")
    }

    // MARK: Concurrency

    @Test(.timeLimit(.minutes(1)))
    func aCopyOverlappedByAWriteIsSkipped() async throws {
        let (front, back, cache) = makeTiers()
        back[1] = entry("old")
        back.holdReads()
        let read = Task { try await cache.entry(forKey: 1) }
        await back.waitForReads(1)  // the read has "old" and is slow to return
        try await cache.setEntry(entry("new"), forKey: 1)
        back.releaseReads()
        #expect(try await read.value == entry("old"))
        #expect(front[1] == entry("new"), "the older entry read before the write is not copied over it")
        #expect(front.writes(forKey: 1) == [entry("new")])
    }

    @Test(.timeLimit(.minutes(1)))
    func aCopyOverlappedByAnInvalidationIsSkipped() async throws {
        let (front, back, cache) = makeTiers()
        back[1] = entry("old")
        back.holdReads()
        let read = Task { try await cache.entry(forKey: 1) }
        await back.waitForReads(1)
        try await cache.invalidateEntries { _ in true }
        back.releaseReads()
        _ = try await read.value
        #expect(front[1] == nil, "an unmarked copy would make the front fresher than the back")
        #expect(try await cache.entry(forKey: 1) == entry("old", invalidated: true))
    }

    @Test(.timeLimit(.minutes(1)))
    func aCopyOverlappedByARemovalIsSkipped() async throws {
        let (front, back, cache) = makeTiers()
        back[1] = entry("old")
        back.holdReads()
        let read = Task { try await cache.entry(forKey: 1) }
        await back.waitForReads(1)
        try await cache.removeEntry(forKey: 1)
        back.releaseReads()
        _ = try await read.value
        #expect(front[1] == nil, "the removed entry is not brought back")
        #expect(try await cache.entry(forKey: 1) == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func aCopyThatAWriteOvertakesIsUndone() async throws {
        let base = Tier()
        let front = GatedWrites(base: base, gatedValue: "old")
        let back = Tier([1: entry("old")])
        let cache = TieredCache(front: front, back: back, policy: policy, clock: clock)
        let read = Task { try await cache.entry(forKey: 1) }
        await front.arrived.wait()  // the copy of "old" is on its way to the front
        try await cache.setEntry(entry("new"), forKey: 1)
        #expect(base[1] == entry("new"))
        front.gate.open()  // the copy lands after the write
        #expect(try await read.value == entry("old"))
        #expect(base[1] == nil, "the copy the write overtook is undone")
        #expect(base.writes(forKey: 1) == [entry("new"), entry("old")])
        #expect(try await cache.entry(forKey: 1) == entry("new"))
    }

    @Test(.timeLimit(.minutes(1)))
    func overlappingWritesOfOneKeyLeaveTheFrontEmpty() async throws {
        let (front, back, cache) = makeTiers()
        front.holdWrites()
        let first = Task { try await cache.setEntry(entry("first"), forKey: 1) }
        await front.waitForWriteAttempts(1)
        let second = Task { try await cache.setEntry(entry("second"), forKey: 1) }
        await front.waitForWriteAttempts(2)
        #expect(back[1] == entry("second"))
        front.releaseWrites()
        try await first.value
        try await second.value
        #expect(front[1] == nil, "the front writes may land in either order: both are undone")
        #expect(try await cache.entry(forKey: 1) == entry("second"))
        #expect(front[1] == entry("second"))
    }

    @Test(.timeLimit(.minutes(1)))
    func concurrentOperationsNeverLeaveTheFrontDisagreeingWithTheBack() async throws {
        let (front, back, cache) = makeTiers()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<400 {
                let key = task % 4
                group.addTask {
                    switch task % 7 {
                    case 0, 1, 2: _ = try? await cache.entry(forKey: key)
                    case 3:
                        let entry = CacheEntry(value: "\(task)", storedAt: .distantFuture)
                        try? await cache.setEntry(entry, forKey: key)
                    case 4: try? await cache.removeEntry(forKey: key)
                    case 5: try? await cache.invalidateEntry(forKey: key)
                    default:
                        if task % 5 == 0 {
                            try? await cache.invalidateEntries { $0 == key }
                        } else {
                            _ = try? await cache.entry(forKey: key)
                        }
                    }
                }
            }
        }
        for key in 0..<4 {
            #expect(front[key] == nil || front[key] == back[key], "key \(key)")
        }
    }
}

/// A front tier whose writes always fail while its removals, invalidations and reads work.
private struct FailingSets: KeyedCache {
    let base: TestKeyedCache<Int, String>

    var policy: FreshnessPolicy { base.policy }

    func entry(forKey key: Int) async throws -> CacheEntry<String>? {
        try await base.entry(forKey: key)
    }

    func setEntry(_ entry: CacheEntry<String>, forKey key: Int) async throws {
        throw TierFailure(name: "front write")
    }

    func removeEntry(forKey key: Int) async throws {
        try await base.removeEntry(forKey: key)
    }

    func invalidateEntry(forKey key: Int) async throws {
        try await base.invalidateEntry(forKey: key)
    }

    func invalidateEntries(where isIncluded: @escaping @Sendable (Int) -> Bool) async throws {
        try await base.invalidateEntries(where: isIncluded)
    }

    func removeAllEntries() async throws {
        try await base.removeAllEntries()
    }
}

/// A front tier whose writes of one value wait for ``gate`` (after opening ``arrived``), while every other
/// operation goes straight to `base`.
private struct GatedWrites: KeyedCache {
    let base: TestKeyedCache<Int, String>
    let gatedValue: String
    /// Opened when a write of `gatedValue` arrives.
    let arrived = Signal()
    /// Lets writes of `gatedValue` proceed once opened.
    let gate = Signal()

    var policy: FreshnessPolicy { base.policy }

    func entry(forKey key: Int) async throws -> CacheEntry<String>? {
        try await base.entry(forKey: key)
    }

    func setEntry(_ entry: CacheEntry<String>, forKey key: Int) async throws {
        if entry.value == gatedValue {
            arrived.open()
            await gate.wait()
        }
        try await base.setEntry(entry, forKey: key)
    }

    func removeEntry(forKey key: Int) async throws {
        try await base.removeEntry(forKey: key)
    }

    func invalidateEntry(forKey key: Int) async throws {
        try await base.invalidateEntry(forKey: key)
    }

    func invalidateEntries(where isIncluded: @escaping @Sendable (Int) -> Bool) async throws {
        try await base.invalidateEntries(where: isIncluded)
    }

    func removeAllEntries() async throws {
        try await base.removeAllEntries()
    }
}
