@testable import StoreFlowable

/// A store whose stream yields what the test sends and whose `refresh()` returns only once the gate is
/// open, as any store's may return a moment after its outcome reached the stream (the stream is
/// consumed by another task).
final class GatedRefreshStore: StoreFlowable, Sendable {
    private struct Inner {
        var continuations: [AsyncStream<LoadingState<String>>.Continuation] = []
        var refreshes = 0
        var gateOpen = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let inner = LockedValue(Inner())

    var refreshCount: Int { inner.withLock { $0.refreshes } }

    func send(_ state: LoadingState<String>) {
        for continuation in inner.withLock({ $0.continuations }) { continuation.yield(state) }
    }

    func openGate() {
        let waiting = inner.withLock { inner in
            inner.gateOpen = true
            defer { inner.waiting = [] }
            return inner.waiting
        }
        for waiter in waiting { waiter.resume() }
    }

    func publish(forceRefresh: Bool) -> AsyncStream<LoadingState<String>> {
        let (stream, continuation) = AsyncStream.makeStream(of: LoadingState<String>.self)
        inner.withLock { $0.continuations.append(continuation) }
        return stream
    }

    func refresh() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = inner.withLock { inner in
                inner.refreshes += 1
                if !inner.gateOpen { inner.waiting.append(continuation) }
                return inner.gateOpen
            }
            if open { continuation.resume() }
        }
    }

    func getData(from: GettingFrom) async -> String? { nil }
    func requireData(from: GettingFrom) async throws -> String { throw StoreFlowableError.noValidCache }
    func validate() async {}
    func update(newData: String?) async {}
    func update(_ transform: @escaping @Sendable (String?) throws -> String?) async throws {}
    func invalidate() async throws {}
    func clear() async {}
    func dataState() async -> DataState { .fixed }
}
