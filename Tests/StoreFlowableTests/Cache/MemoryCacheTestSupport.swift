import StoreFlowableTesting
import Testing

@testable import StoreFlowable

// Shared by the MemoryCache tests: a seeded random generator, values and keys that report their
// release, and a clock that calls back into a cache.

/// The seeded generator of the machine tests (SplitMix64), so that a failing random test repeats exactly.
typealias CacheTestRandom = MachineTest.Random

extension MachineTest.Random {
    /// `true` with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}

/// An object that runs `onDeinit` when released: a value or part of a key whose `deinit` is user code.
final class CacheDeinitProbe: Sendable {
    let id: Int
    private let onDeinit: @Sendable (Int) -> Void

    init(_ id: Int, onDeinit: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.id = id
        self.onDeinit = onDeinit
    }

    deinit { onDeinit(id) }
}

/// A key holding an object: equal and hashed by `id` only, so two instances can be the same key.
struct CacheProbeKey: Hashable, Sendable {
    let id: Int
    let probe: CacheDeinitProbe

    static func == (lhs: CacheProbeKey, rhs: CacheProbeKey) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// A clock that calls `onRead` each time it is read, then shows `base`'s time.
final class CallingBackClock: CacheClock {
    let base = ManualCacheClock()
    private let onRead: LockedValue<(@Sendable () -> Void)?> = LockedValue(nil)

    var now: CacheTime {
        onRead.withLock { $0 }?()
        return base.now
    }

    /// Sets what a read of ``now`` calls.
    func setOnRead(_ body: @escaping @Sendable () -> Void) { onRead.withLock { $0 = body } }
}

/// A thread-safe list of what happened, in order.
final class LockedLog<Event: Sendable>: Sendable {
    private let events = LockedValue<[Event]>([])

    func append(_ event: Event) { events.withLock { $0.append(event) } }
    var all: [Event] { events.withLock { $0 } }
}

extension MemoryCache {
    /// The keys, most recently used first, read without touching recency.
    var keysByRecency: [Key] { storageSnapshot.keysByRecency }

    /// The broken invariants of the storage; empty when it is consistent.
    var invariantViolations: [String] { storageSnapshot.invariantViolations() }

    /// The stored entry of `key`, read without touching recency or expiry.
    func peekEntry(_ key: Key) -> CacheEntry<Value>? { storageSnapshot.peek(key)?.entry }
}

/// The default start of `ManualCacheClock`, for timestamps in expectations.
let manualClockStart = ManualCacheClock().now
