extension Duration {
    /// The duration for an event's one-line description: `12 µs`, `20.125 ms`, `1.500 s`.
    var eventDescription: String {
        let (seconds, attoseconds) = components
        if seconds < 0 || attoseconds < 0 { return "\(self)" }
        let microseconds = attoseconds / 1_000_000_000_000
        if seconds >= 1 {
            return "\(seconds).\(Self.threeDigits(microseconds / 1_000)) s"
        }
        if microseconds < 1_000 { return "\(microseconds) µs" }
        return "\(microseconds / 1_000).\(Self.threeDigits(microseconds % 1_000)) ms"
    }

    private static func threeDigits(_ value: Int64) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }
}
