public import StoreFlowable

/// A wall clock for tests that moves only when told to: inject it into caches and stores, then
/// ``advance(by:)`` it to cross a freshness boundary exactly, with no sleeping.
///
/// ```swift
/// let clock = ManualCacheClock()
/// let cache = MemoryCache<Int, String>(policy: FreshnessPolicy(freshFor: .seconds(10)), clock: clock)
/// cache[1] = "one"
/// clock.advance(by: .seconds(10))   // now exactly 10 s old: stale
/// ```
///
/// Every method may be called from any task, concurrently. Moving the clock does not wake anything up:
/// ages are computed when a cache or store next reads ``now``.
public final class ManualCacheClock: CacheClock {
    private let time: LockedValue<CacheTime>

    /// Creates a clock showing `start`.
    ///
    /// - Parameter start: The initial time; by default 2023-11-14 22:13:20 UTC (1,700,000,000 s after
    ///   1970), far from both ends of the range so that tests can move either way.
    public init(_ start: CacheTime = CacheTime(nanosecondsSince1970: 1_700_000_000_000_000_000)) {
        time = LockedValue(start)
    }

    /// The time the clock shows.
    public var now: CacheTime { time.withLock { $0 } }

    /// Moves the clock by `duration`; a negative duration moves it back, as a wall clock can.
    ///
    /// - Parameter duration: How far to move.
    public func advance(by duration: Duration) {
        time.withLock { $0 = $0.advanced(by: duration) }
    }

    /// Sets the clock to `newTime`, earlier or later.
    ///
    /// - Parameter newTime: The time the clock shows from now on.
    public func set(to newTime: CacheTime) {
        time.withLock { $0 = newTime }
    }
}
