#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Bionic)
    import Bionic
#endif

/// The system's wall clock (`CLOCK_REALTIME`), the default time source of caches and stores.
///
/// It follows the system time, including adjustments backwards; entries that then appear to come from
/// the future are treated as stale (see ``FreshnessPolicy``).
public struct SystemCacheClock: CacheClock {
    /// Creates the clock; it holds no state.
    public init() {}

    /// The current wall-clock time, read with `clock_gettime(CLOCK_REALTIME)`.
    public var now: CacheTime {
        var spec = timespec()
        // `clock_gettime` with `CLOCK_REALTIME` and a valid pointer cannot fail (POSIX lists only an
        // invalid clock id or pointer); should it anyway, the zeroed `spec` reads as 1970, which every
        // policy treats as very old, never as fresh.
        _ = clock_gettime(CLOCK_REALTIME, &spec)
        let seconds = Int64(spec.tv_sec)
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .distantPast : .distantFuture }
        return CacheTime(nanosecondsSince1970: scaled &+ Int64(spec.tv_nsec))
    }
}
