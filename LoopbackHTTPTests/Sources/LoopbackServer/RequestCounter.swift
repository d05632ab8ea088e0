import NIOConcurrencyHelpers

/// Counts the requests of each route of a ``LoopbackServer``, from the server's threads, and wakes the
/// tests waiting for a count.
final class RequestCounter: Sendable {
    private struct Waiter {
        let route: String
        let count: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var counts: [String: Int] = [:]
        var nextID = 0
        var waiters: [Int: Waiter] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// Counts one request (or event) of `route`, and wakes the waiters whose count it reaches.
    func add(_ route: String) {
        let reached = state.withLockedValue { state in
            state.counts[route, default: 0] += 1
            let count = state.counts[route, default: 0]
            let reached = state.waiters.filter { $0.value.route == route && $0.value.count <= count }
            for id in reached.keys { state.waiters[id] = nil }
            return reached.values.map(\.continuation)
        }
        for continuation in reached { continuation.resume(returning: true) }
    }

    /// The requests of `route` so far.
    func count(_ route: String) -> Int {
        state.withLockedValue { $0.counts[route, default: 0] }
    }

    /// Returns `true` once `route` has counted `count` requests, or `false` after `limit` (or when the
    /// calling task is cancelled), whichever comes first.
    func wait(until route: String, reaches count: Int, atMost limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.wait(until: route, reaches: count) }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let reached = await group.next() ?? false
            group.cancelAll()
            return reached
        }
    }

    /// Returns `true` once `route` has counted `count` requests, or `false` when the calling task is
    /// cancelled first.
    private func wait(until route: String, reaches count: Int) async -> Bool {
        let id = state.withLockedValue { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let reachedAlready: Bool? = state.withLockedValue { state in
                    if state.counts[route, default: 0] >= count { return true }
                    if Task.isCancelled { return false }
                    state.waiters[id] = Waiter(route: route, count: count, continuation: continuation)
                    return nil
                }
                if let reachedAlready { continuation.resume(returning: reachedAlready) }
            }
        } onCancel: {
            let waiter = state.withLockedValue { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: false)
        }
    }
}
