import StoreFlowable

/// A store whose `publish()` stream yields a fixed list of states and then stays open, for showing a
/// loader a state no real store produces on demand (such as an error that is a cancellation). Every
/// other operation does nothing.
struct StateScriptStore: StoreFlowable {
    let states: [LoadingState<String>]

    func publish(forceRefresh: Bool) -> AsyncStream<LoadingState<String>> {
        let (stream, continuation) = AsyncStream.makeStream(of: LoadingState<String>.self)
        for state in states { continuation.yield(state) }
        // Kept open, like a store's stream, until the consumer leaves.
        continuation.onTermination = { _ in }
        return stream
    }

    func getData(from: GettingFrom) async -> String? { nil }
    func requireData(from: GettingFrom) async throws -> String { throw StoreFlowableError.noValidCache }
    func validate() async {}
    func refresh() async {}
    func update(newData: String?) async {}
    func update(_ transform: @escaping @Sendable (String?) throws -> String?) async throws {}
    func invalidate() async throws {}
    func clear() async {}
    func dataState() async -> DataState { .fixed }
}

/// A counter shared between tasks.
final class LockedCounter: Sendable {
    private let count = LockedValue(0)

    /// Adds one and returns the new count.
    func increment() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}
