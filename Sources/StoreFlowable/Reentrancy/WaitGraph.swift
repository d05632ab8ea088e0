/// The waits made from inside callbacks, across every key and every state manager of the process, so
/// that a wait that would close a cycle is refused instead of hanging.
///
/// An edge `a → b` means a task running a callback of key `a` waits for key `b` (for its fetch, a page,
/// or its write turn). A callback of `a` that is about to wait for `b` asks ``begin(from:to:)`` first:
/// when `b` is `a`, or `b` already waits (through any chain of such edges) for `a`, the wait could never
/// end, and the call is answered without waiting. The check and the insertion happen under one lock, so
/// of two waits that would close a cycle together, the second one sees the first.
///
/// Only waits made inside callbacks touch the graph; calls from outside the library's callbacks never
/// do. The graph holds an edge only while its wait lasts.
///
/// Lock rule (see ``PthreadMutex``): the lock guards only `edges`; nothing else runs under it.
enum WaitGraph {
    /// The edges, with how many waits currently make each one.
    private static let edges = LockedValue([WaitNode: [WaitNode: Int]]())

    /// Records that a callback of `from` is about to wait for `to`, unless that wait closes a cycle.
    ///
    /// - Parameters:
    ///   - from: The key whose callback waits.
    ///   - to: The key it waits for.
    /// - Returns: `false` when the wait would never end (`to` is `from`, or `to` waits for `from`);
    ///   nothing is recorded then. When `true`, the caller must call ``end(from:to:)`` once the wait ends.
    static func begin(from: WaitNode, to: WaitNode) -> Bool {
        edges.withLock { edges in
            if from == to || reaches(to, from, in: edges) { return false }
            edges[from, default: [:]][to, default: 0] += 1
            return true
        }
    }

    /// Removes the edge a successful ``begin(from:to:)`` recorded.
    static func end(from: WaitNode, to: WaitNode) {
        edges.withLock { edges in
            guard let count = edges[from]?[to] else { return }
            if count > 1 {
                edges[from]?[to] = count - 1
            } else {
                edges[from]?[to] = nil
                if edges[from]?.isEmpty == true { edges[from] = nil }
            }
        }
    }

    /// Whether `target` can be reached from `start` by following edges.
    private static func reaches(_ start: WaitNode, _ target: WaitNode, in edges: [WaitNode: [WaitNode: Int]]) -> Bool {
        var seen: Set<WaitNode> = [start]
        var stack = [start]
        while let node = stack.popLast() {
            for next in edges[node]?.keys ?? [:].keys {
                if next == target { return true }
                if seen.insert(next).inserted { stack.append(next) }
            }
        }
        return false
    }

    /// The number of waits recorded now from callbacks of the keys of `manager`, for tests.
    static func edgeCount(from manager: ObjectIdentifier) -> Int {
        edges.withLock { edges in
            edges.filter { $0.key.manager == manager }.values.reduce(0) { $0 + $1.values.reduce(0, +) }
        }
    }
}
