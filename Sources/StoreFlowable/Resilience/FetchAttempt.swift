/// The origin call running on the current task, as the store's retry loop sees it: which attempt it
/// is, and a way for the origin to say that it must not be repeated.
///
/// Read ``current`` inside `fetchDataFromOrigin()` (or a page fetch, or a `KeyedStore` fetch): it is
/// `nil` outside an origin call the store makes, and inside the origin calls of a store whose fetch
/// policy has a single attempt, no concurrency limit and no observer (there is nothing to number or
/// forbid: such a store calls the origin exactly as it would without a policy).
///
/// ```swift
/// func fetchDataFromOrigin() async throws -> Order {
///     if FetchAttempt.current?.number ?? 1 > 1 { print("retrying order \(key)") }
///     return try await api.order(key)
/// }
/// ```
public struct FetchAttempt: Sendable {
    /// The attempt's number among the origin calls of one fetch, from 1.
    public let number: Int
    let refusal: RetryRefusal

    @TaskLocal static var scoped: FetchAttempt?

    /// The origin call running on this task, or `nil` outside one.
    public static var current: FetchAttempt? { scoped }

    /// Asks the store not to retry this attempt if it fails, whatever the retry policy says: for an
    /// origin call that may have changed something on the server (a `POST` that is not a query).
    ///
    /// `SimpleNetworkLoader` calls it for requests whose method is not idempotent.
    public func forbidRetry() {
        refusal.refuse()
    }
}

/// Whether the origin forbade retrying one attempt (see ``FetchAttempt/forbidRetry()``).
final class RetryRefusal: Sendable {
    private let isRefused = LockedValue(false)

    /// Marks the attempt as not to be retried.
    func refuse() {
        isRefused.withLock { $0 = true }
    }

    /// Whether ``refuse()`` was called.
    var wasRefused: Bool { isRefused.withLock { $0 } }
}
