@testable import StoreFlowable

/// Stores whose `publish()` streams yield exactly the states a test sends, when it sends them, for
/// showing a loader any state (or ending its stream) at a chosen moment.
///
/// Every `publish()` call registers a new stream under its key; ``send(_:to:)`` yields to every stream
/// of the key registered so far, including one whose consumer has already been cancelled but not yet
/// told (which is how a state ends up in flight to a superseded load). Every other store operation does
/// nothing; ``refreshCount`` counts `refresh()` calls.
///
/// A stream ends (``endedCount(of:)``) when it is finished or its consumer's task is cancelled.
final class HandFedStores: Sendable {
    /// What the stores saw.
    private struct Feeds {
        /// The streams of each key, in the order they were published.
        var streams: [String: [AsyncStream<LoadingState<String>>.Continuation]] = [:]
        /// How many streams of each key ended.
        var ended: [String: Int] = [:]
        /// How many times `refresh()` was called.
        var refreshes = 0
    }

    private let feeds = LockedValue(Feeds())

    /// The store of `key`.
    func store(for key: String) -> HandFedStore {
        HandFedStore(key: key, stores: self)
    }

    /// Yields `state` to every stream of `key`.
    func send(_ state: LoadingState<String>, to key: String) {
        for continuation in feeds.withLock({ $0.streams[key] ?? [] }) { continuation.yield(state) }
    }

    /// Finishes every stream of `key`, as a store whose stream ends by itself would.
    func finish(_ key: String) {
        for continuation in feeds.withLock({ $0.streams[key] ?? [] }) { continuation.finish() }
    }

    /// How many streams of `key` were published.
    func publishCount(of key: String) -> Int {
        feeds.withLock { $0.streams[key]?.count ?? 0 }
    }

    /// How many streams of `key` ended.
    func endedCount(of key: String) -> Int {
        feeds.withLock { $0.ended[key] ?? 0 }
    }

    /// How many times `refresh()` was called, on any key.
    var refreshCount: Int {
        feeds.withLock { $0.refreshes }
    }

    fileprivate func register(_ continuation: AsyncStream<LoadingState<String>>.Continuation, for key: String) {
        feeds.withLock { $0.streams[key, default: []].append(continuation) }
    }

    fileprivate func countEnd(of key: String) {
        feeds.withLock { $0.ended[key, default: 0] += 1 }
    }

    fileprivate func countRefresh() {
        feeds.withLock { $0.refreshes += 1 }
    }
}

/// The store of one key of ``HandFedStores``.
struct HandFedStore: StoreFlowable {
    let key: String
    let stores: HandFedStores

    func publish(forceRefresh: Bool) -> AsyncStream<LoadingState<String>> {
        let (stream, continuation) = AsyncStream.makeStream(of: LoadingState<String>.self)
        let (key, stores) = (key, stores)
        continuation.onTermination = { _ in stores.countEnd(of: key) }
        stores.register(continuation, for: key)
        return stream
    }

    func refresh() async { stores.countRefresh() }

    func getData(from: GettingFrom) async -> String? { nil }
    func requireData(from: GettingFrom) async throws -> String { throw StoreFlowableError.noValidCache }
    func validate() async {}
    func update(newData: String?) async {}
    func update(_ transform: @escaping @Sendable (String?) throws -> String?) async throws {}
    func invalidate() async throws {}
    func clear() async {}
    func dataState() async -> DataState { .fixed }
}
