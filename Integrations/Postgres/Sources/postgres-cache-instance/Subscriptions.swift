/// The running `subscribe` streams of an instance, by key, so that `unsubscribe` and `quit` can end
/// them.
actor Subscriptions {
    /// The tasks reading each key's streams.
    private var running: [String: [Task<Void, Never>]] = [:]

    /// Keeps `task`, which reads a stream of `key`, until ``end(_:)`` or ``endAll()``.
    ///
    /// - Parameters:
    ///   - task: The reading task.
    ///   - key: Its key.
    func add(_ task: Task<Void, Never>, for key: String) {
        running[key, default: []].append(task)
    }

    /// Ends every stream of `key` and waits until their tasks return.
    ///
    /// - Parameter key: The key.
    func end(_ key: String) async {
        let tasks = running.removeValue(forKey: key) ?? []
        await Self.end(tasks)
    }

    /// Ends every stream and waits until their tasks return.
    func endAll() async {
        let tasks = running.values.flatMap { $0 }
        running = [:]
        await Self.end(tasks)
    }

    /// Cancels `tasks` (a cancelled reader's stream ends, which ends the subscription) and waits for
    /// them.
    ///
    /// - Parameter tasks: The reading tasks.
    private static func end(_ tasks: [Task<Void, Never>]) async {
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}
