/// Bounds how many idle keys a ``FlowableDataStateManager`` keeps only to remember their last error,
/// forgetting the oldest first.
///
/// A key whose fetch failed stays tracked after everyone left, so the next subscriber still sees the
/// error. On a server, failures for ever-new keys (ids that do not exist, say) would otherwise pile up;
/// this queue caps them. Entries are stamped so that a key that became active and idle again moves to
/// the back, and stale entries are compacted away, keeping memory proportional to `limit`.
struct ErrorRetention<Element: Hashable> {
    /// The most idle keys kept for their error.
    let limit: Int
    private var stamps: [Element: UInt64] = [:]
    private var order: [(element: Element, stamp: UInt64)] = []
    private var head = 0
    private var lastStamp: UInt64 = 0

    /// Creates an empty queue keeping at most `limit` elements (negative limits count as zero).
    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// The number of elements retained.
    var count: Int { stamps.count }

    /// The entries stored, live or stale (for tests of the compaction).
    var storedEntryCount: Int { order.count - head }

    /// Whether `element` is retained.
    func contains(_ element: Element) -> Bool { stamps[element] != nil }

    /// Retains `element` as the newest entry unless it is retained already.
    ///
    /// - Returns: The oldest elements forgotten to stay within ``limit``; the caller releases them.
    mutating func retain(_ element: Element) -> [Element] {
        guard stamps[element] == nil else { return [] }
        lastStamp &+= 1
        stamps[element] = lastStamp
        order.append((element, lastStamp))
        var forgotten: [Element] = []
        while stamps.count > limit, head < order.count {
            let oldest = order[head]
            head += 1
            if stamps[oldest.element] == oldest.stamp {
                stamps[oldest.element] = nil
                forgotten.append(oldest.element)
            }
        }
        compactIfNeeded()
        return forgotten
    }

    /// Stops retaining `element` (it became active again, or was released).
    mutating func remove(_ element: Element) {
        guard stamps.removeValue(forKey: element) != nil else { return }
        compactIfNeeded()
    }

    /// Drops consumed and stale entries once they outnumber the live ones.
    private mutating func compactIfNeeded() {
        guard order.count - head > 2 * stamps.count + 16 || head > 16 && head * 2 > order.count else { return }
        order = order[head...].filter { stamps[$0.element] == $0.stamp }
        head = 0
    }
}
