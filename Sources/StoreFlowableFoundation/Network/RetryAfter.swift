#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads an HTTP `Retry-After` header (RFC 9110 §10.2.3): a number of seconds, or an HTTP date.
enum RetryAfter {
    /// The delay `value` asks for, counted from `now`; `nil` when it is neither form.
    ///
    /// A date in the past asks for no delay. Only the preferred date form (IMF-fixdate,
    /// `Sun, 06 Nov 1994 08:49:37 GMT`) is read; the obsolete ones count as unreadable.
    ///
    /// - Parameters:
    ///   - value: The header's value.
    ///   - now: The current time, to count a date from.
    /// - Returns: The delay, at least zero, or `nil`.
    static func delay(from value: String, now: Date) -> Duration? {
        let value = value.trimmingCharacters(in: .whitespaces)
        if !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // A number too long for Int64 is still "a very long time": the policy caps it.
            return .seconds(Int64(value) ?? Int64.max)
        }
        guard let date = secondsSince1970(ofIMFFixdate: value) else { return nil }
        let seconds = date - now.timeIntervalSince1970
        return seconds > 0 ? .seconds(seconds) : .zero
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The time of an IMF-fixdate such as `Sun, 06 Nov 1994 08:49:37 GMT`, in seconds since 1970.
    private static func secondsSince1970(ofIMFFixdate value: String) -> Double? {
        // "Sun," "06" "Nov" "1994" "08:49:37" "GMT"
        let parts = value.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = Int(parts[1]), (1...31).contains(day),
            let month = months.firstIndex(of: String(parts[2])),
            let year = Int(parts[3]), parts[3].count == 4
        else { return nil }
        let time = parts[4].split(separator: ":")
        guard time.count == 3, let hour = Int(time[0]), let minute = Int(time[1]), let second = Int(time[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysSince1970(year: year, month: month + 1, day: day)
        return Double(days * 86_400 + hour * 3_600 + minute * 60 + second)
    }

    /// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar.
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        // Counts years from March, so that the leap day ends the year.
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
