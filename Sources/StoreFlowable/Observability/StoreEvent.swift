/// Something a store did or found, reported to the ``StoreEventObserver`` of its manager: a cache hit
/// or miss, a fetch starting, joined, succeeding, failing or retried, a stale value served, a batch
/// dispatched, an invalidation.
///
/// Each event names the key and the data type it concerns (``key`` and ``dataType``), except a batch
/// dispatch, which concerns many keys. Use the kind and the data type for metric labels; the key is
/// there for logs and traces only: it is unbounded (a user id, a URL), and a label per key would grow
/// a metrics backend without limit.
public struct StoreEvent: Sendable, CustomStringConvertible {
    /// What happened.
    public let kind: Kind
    /// The key the event concerns; `nil` for ``Kind/batchDispatched(size:)``. Not fit for metric labels.
    public let key: (any Hashable & Sendable)?
    /// The data type of the store that reported the event (the batch's value type for a batch).
    public let dataType: any Any.Type

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - kind: What happened.
    ///   - key: The key the event concerns, or `nil` for an event of many keys.
    ///   - dataType: The data type of the store or batch that reported it.
    public init(_ kind: Kind, key: (any Hashable & Sendable)?, dataType: any Any.Type) {
        self.kind = kind
        self.key = key
        self.dataType = dataType
    }

    /// The event in one line, for logs: its kind, data type and key.
    public var description: String {
        let subject = key.map { "\(dataType) \($0)" } ?? "\(dataType)"
        return "\(kind) (\(subject))"
    }
}
