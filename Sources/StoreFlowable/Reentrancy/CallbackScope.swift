/// What the current task is doing on behalf of a key, so that a callback calling back into the library
/// is recognised and answered without waiting for itself.
///
/// The store sets it around every callback it runs for a key's fetch or cache write (a task-local
/// value, so child tasks and tasks created with `Task {}` inside the callback carry it too). Calls made
/// outside any callback read it once and find `nil`; nothing else is paid for the check.
struct CallbackScope: Sendable {
    /// Which part of a key's pipeline a callback runs in.
    enum Role: Sendable {
        /// The origin fetch of a flight or of a page (`fetchDataFromOrigin()` and the page fetches).
        case fetch
        /// A cache write holding the key's write turn: a flight's or update's `saveDataToCache(newData:)`,
        /// an update's read of the current value, a page's read, merge and save.
        case write
    }

    /// The key the callback runs for.
    let node: WaitNode
    /// The part of the key's pipeline it runs in.
    let role: Role

    /// The scope of the current task, or `nil` outside every callback the store runs.
    @TaskLocal static var current: CallbackScope?

    /// Runs `body` inside the scope of `node` in `role`.
    ///
    /// - Parameters:
    ///   - node: The key the callback runs for.
    ///   - role: The part of the key's pipeline it runs in.
    ///   - body: The callback.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    static func run<Result: Sendable>(
        _ node: WaitNode, _ role: Role, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await $current.withValue(CallbackScope(node: node, role: role)) { try await body() }
    }
}
