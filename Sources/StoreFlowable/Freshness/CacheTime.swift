/// A wall-clock moment, in nanoseconds since 1970-01-01 00:00:00 UTC: when a cache entry was stored.
///
/// Cache timestamps are wall-clock based so that an entry written to disk keeps its age across a
/// restart (a monotonic clock restarts with the process). The wall clock can go backwards; a
/// ``FreshnessPolicy`` therefore treats a timestamp in the future as stale, never as fresh.
///
/// Arithmetic saturates: adding a huge `Duration` gives the latest representable time instead of
/// trapping, so "never expires" needs no special value.
public struct CacheTime: InstantProtocol, Codable, CustomStringConvertible {
    /// Nanoseconds since 1970-01-01 00:00:00 UTC; negative before it.
    public var nanosecondsSince1970: Int64

    /// Creates the moment `nanosecondsSince1970` nanoseconds after (or, if negative, before) 1970-01-01
    /// 00:00:00 UTC.
    ///
    /// - Parameter nanosecondsSince1970: The offset from 1970 in nanoseconds.
    public init(nanosecondsSince1970: Int64) {
        self.nanosecondsSince1970 = nanosecondsSince1970
    }

    /// The earliest representable moment.
    public static let distantPast = CacheTime(nanosecondsSince1970: .min)
    /// The latest representable moment.
    public static let distantFuture = CacheTime(nanosecondsSince1970: .max)

    /// The moment `duration` after this one, saturating at ``distantPast`` and ``distantFuture``.
    ///
    /// - Parameter duration: The offset to add; may be negative.
    /// - Returns: The moment, never overflowing.
    public func advanced(by duration: Duration) -> CacheTime {
        let (sum, overflow) = nanosecondsSince1970.addingReportingOverflow(duration.saturatedNanoseconds)
        if overflow { return duration < .zero ? .distantPast : .distantFuture }
        return CacheTime(nanosecondsSince1970: sum)
    }

    /// The time from this moment to `other`; negative when `other` is earlier.
    ///
    /// - Parameter other: The later (or earlier) moment.
    /// - Returns: The exact difference (it cannot overflow: `Duration` has 128 bits).
    public func duration(to other: CacheTime) -> Duration {
        .nanoseconds(Int128(other.nanosecondsSince1970) - Int128(nanosecondsSince1970))
    }

    /// Whether `lhs` is earlier than `rhs`.
    ///
    /// - Returns: `true` when `lhs` comes first.
    public static func < (lhs: CacheTime, rhs: CacheTime) -> Bool {
        lhs.nanosecondsSince1970 < rhs.nanosecondsSince1970
    }

    /// The moment as seconds and nanoseconds since 1970, for logs.
    public var description: String {
        let (seconds, nanoseconds) = nanosecondsSince1970.quotientAndRemainder(dividingBy: 1_000_000_000)
        let fraction = String(abs(nanoseconds))
        let padded = String(repeating: "0", count: 9 - fraction.count) + fraction
        let sign = nanosecondsSince1970 < 0 && seconds == 0 ? "-" : ""
        return "\(sign)\(seconds).\(padded)s since 1970"
    }
}

extension Duration {
    /// The duration in whole nanoseconds, rounded towards zero and clamped to `Int64`.
    var saturatedNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return sum
    }
}
