import Synchronization

/// Records values from any task (a listener's changes, a cache's events) and lets a test wait until
/// what it recorded satisfies a condition: the waiter is woken by each new value, never by a timer.
///
/// A wait gives up after a bound (30 seconds by default) with ``NotReached``, and returns at once when
/// the waiting task is cancelled (by a test's time limit, say).
final class Recorder<Element: Sendable>: Sendable {
    /// A wait that did not see its condition hold within its bound.
    struct NotReached: Error, CustomStringConvertible {
        /// What was awaited, and what was recorded.
        var description: String
    }

    private struct Waiter {
        var condition: @Sendable ([Element]) -> Bool
        var continuation: CheckedContinuation<[Element]?, Never>
    }

    private struct State {
        var elements: [Element] = []
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
        /// Waiters cancelled before they were stored.
        var cancelledEarly: Set<Int> = []
    }

    private let state = Mutex(State())

    init() {}

    /// Records `element` and wakes the waiters whose condition now holds.
    ///
    /// - Parameter element: The value.
    func record(_ element: Element) {
        let ready = state.withLock { state -> [(CheckedContinuation<[Element]?, Never>, [Element])] in
            state.elements.append(element)
            let elements = state.elements
            let satisfied = state.waiters.filter { $0.value.condition(elements) }
            for id in satisfied.keys { state.waiters.removeValue(forKey: id) }
            return satisfied.values.map { ($0.continuation, elements) }
        }
        for (continuation, elements) in ready { continuation.resume(returning: elements) }
    }

    /// Everything recorded so far, in order.
    var elements: [Element] { state.withLock { $0.elements } }

    /// Waits until the recorded values satisfy `condition`.
    ///
    /// - Parameters:
    ///   - what: What is awaited, for the failure.
    ///   - limit: The longest wait.
    ///   - condition: Checked now and after each new value.
    /// - Returns: The values recorded when the condition held.
    /// - Throws: ``NotReached`` after `limit`, or when the task is cancelled.
    @discardableResult
    func wait(
        _ what: String, within limit: Duration = .seconds(30),
        until condition: @escaping @Sendable ([Element]) -> Bool
    ) async throws -> [Element] {
        let found = await withTaskGroup(of: [Element]?.self) { group in
            group.addTask { await self.waitWithoutBound(until: condition) }
            group.addTask {
                // A bound on a wait that events end, not a synchronisation: it only ends a failing test.
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let found else {
            throw NotReached(description: "not within \(limit): \(what); recorded \(elements)")
        }
        return found
    }

    /// Waits until at least `count` values are recorded.
    ///
    /// - Parameters:
    ///   - count: How many.
    ///   - limit: The longest wait.
    /// - Returns: The values recorded then.
    /// - Throws: ``NotReached`` after `limit`, or when the task is cancelled.
    @discardableResult
    func wait(forCount count: Int, within limit: Duration = .seconds(30)) async throws -> [Element] {
        try await wait("\(count) values", within: limit) { $0.count >= count }
    }

    /// Waits until `condition` holds, or returns `nil` when the task is cancelled.
    private func waitWithoutBound(until condition: @escaping @Sendable ([Element]) -> Bool) async -> [Element]? {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        defer { state.withLock { _ = $0.cancelledEarly.remove(id) } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Element]?, Never>) in
                let outcome = state.withLock { state -> [Element]?? in
                    if state.cancelledEarly.remove(id) != nil { return .some(nil) }
                    if condition(state.elements) { return .some(state.elements) }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return .none
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                let waiter = state.waiters.removeValue(forKey: id)
                if waiter == nil { state.cancelledEarly.insert(id) }
                return waiter
            }
            waiter?.continuation.resume(returning: nil)
        }
    }
}
