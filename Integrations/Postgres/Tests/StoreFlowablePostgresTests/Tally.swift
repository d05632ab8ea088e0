import Synchronization

/// A count that escaping closures share.
final class Tally: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    /// Adds one.
    ///
    /// - Returns: The new count.
    @discardableResult
    func add() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}

/// Counts, one per entry, that escaping closures share.
final class Tallies: Sendable {
    private let counts: Mutex<[Int]>

    init(count: Int) { counts = Mutex([Int](repeating: 0, count: count)) }

    var values: [Int] { counts.withLock { $0 } }

    func add(at index: Int) { counts.withLock { $0[index] += 1 } }
}
