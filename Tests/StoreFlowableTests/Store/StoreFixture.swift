import StoreFlowableTesting
import Testing

@testable import StoreFlowable

/// An error with a name, for scripting origins and caches.
struct TestError: Error, Equatable, CustomStringConvertible {
    let name: String
    init(_ name: String) { self.name = name }
    var description: String { name }
}

/// A store over an in-memory cache and a scripted origin. Values starting with "stale" need refresh.
struct StoreFixture: Sendable {
    let manager: FlowableDataStateManager<String>
    let cache: InMemoryCache<String>
    let origin: ScriptedOrigin<String>
    let callback: TestStoreCallback<String, String>

    init(
        key: String = "key",
        cached: String? = nil,
        origin results: [Result<String, any Error>] = [],
        otherwise fallback: (@Sendable (Int) -> Result<String, any Error>)? = { .success("fresh-\($0)") },
        manager: FlowableDataStateManager<String> = FlowableDataStateManager()
    ) {
        self.manager = manager
        cache = InMemoryCache(cached)
        origin = ScriptedOrigin(results, otherwise: fallback)
        callback = TestStoreCallback(
            key: key, manager: manager, cache: cache, origin: origin,
            needRefresh: { $0.hasPrefix("stale") })
    }

    /// A new store for the fixture's key (all stores of one fixture share the key's state).
    var store: AnyStoreFlowable<String> { callback.create() }

    /// Subscribers and waiters the state manager holds for the key.
    func registry() async -> (subscribers: Int, waiters: Int) {
        await manager.registryCounts(for: callback.key, String.self)
    }

    /// Waits until the state manager holds nothing for any key.
    func waitUntilReleased() async {
        await eventually { await manager.trackedKeyCount == 0 }
    }
}

/// Waits for a condition that another task makes true shortly, yielding between checks.
///
/// Used only for releases that happen in a task the library spawns when a stream terminates; the
/// test's `.timeLimit` bounds it: it gives up when the test is cancelled.
func eventually(_ condition: () async -> Bool) async {
    while !Task.isCancelled, !(await condition()) {
        await Task.yield()
    }
}

extension LoadingState {
    /// Whether the state is `.completed`.
    var isCompleted: Bool {
        if case .completed = self { return true }
        return false
    }

    /// Whether the state is `.error`.
    var isError: Bool {
        if case .error = self { return true }
        return false
    }

    /// Whether the state is `.loading`.
    var isLoadingState: Bool {
        if case .loading = self { return true }
        return false
    }
}

extension Task where Failure == Never {
    /// The task's value; cancelling the waiting task (as a test's time limit does) cancels this task too,
    /// so a test whose library call never returns fails instead of hanging.
    var valueOrCancel: Success {
        get async {
            await withTaskCancellationHandler {
                await value
            } onCancel: {
                cancel()
            }
        }
    }
}
