public import StoreFlowable

/// A cache of paged records for tests that keeps only the serialized form of what it saves, like a
/// cache on disk that survives a process restart.
///
/// Keep one instance for the whole test and give it to the callbacks of each simulated "process":
/// drop the stores, the callbacks and the `FlowableDataStateManager` of the first process, create new
/// ones over the same cache, and the second process finds the pages and cursors the first one saved.
///
/// ```swift
/// let cache = PersistentPagedCache<[Int], Int>()
/// try await cache.save(PagedData(data: [1, 2], nextCursor: 2))
/// // …the first process ends; a new one starts over the same cache…
/// #expect(try await cache.load() == PagedData(data: [1, 2], nextCursor: 2))
/// ```
///
/// Why not ``InMemoryCache``: an `InMemoryCache<PagedData<Value, Cursor>>` already outlives stores and
/// managers, but it hands back the very value it was given, so a restart test passes even when the
/// cursor cannot be persisted (a field left out of its `Codable` conformance, a reference to something
/// of the old process). This cache encodes the record with its `Codable` conformance on every
/// ``save(_:)`` and decodes a new record on every ``load()``, so what a test loads is exactly what a
/// disk would give back. The serialized form is an in-memory tree of null, Boolean, number, string,
/// array and keyed values, like a JSON document, built without Foundation; it goes through the same
/// `encode(to:)` and `init(from:)` a JSON coder calls. It does not write files, and it has no holds or
/// waiters: use ``InMemoryCache`` to hold a write open.
///
/// Promises:
/// - Every member may be used from any task, concurrently; encoding and decoding run outside the lock.
/// - A failed ``save(_:)`` (a scripted failure or an encoding error) leaves the stored record as it
///   was and is not counted in ``writeCount``.
/// - Every ``load()`` counts in ``readCount``, including failing ones.
public final class PersistentPagedCache<Value: Codable & Sendable, Cursor: Codable & Sendable>: RecordCache {
    /// The serialized record, counters and failure switches, guarded by one lock.
    struct State: Sendable {
        var stored: StoredValue?
        var reads = 0
        var writes = 0
        var readFailure: (any Error)?
        var writeFailure: (any Error)?
    }

    /// Guards ``State``, following the rule at ``WaiterList``: held only to read and update it, never
    /// while encoding or decoding (the record's own `Codable` code runs after unlocking), and a
    /// replaced error is released after unlocking. No waiter waits on it.
    private let state: LockedValue<State>

    /// Creates an empty cache.
    public init() {
        state = LockedValue(State())
    }

    /// Creates a cache holding `initial`, as if an earlier process had saved it; this is not counted as
    /// a write.
    ///
    /// - Parameter initial: The record to store, or `nil` for an empty cache.
    /// - Throws: What encoding `initial` throws.
    public init(_ initial: PagedData<Value, Cursor>?) throws {
        state = LockedValue(State(stored: try initial.map { try StoredValue(encoding: $0) }))
    }

    // MARK: Cache operations

    /// Reads the stored record, as a paginated callback's `loadDataFromCache()` does: decodes a new
    /// record from its serialized form.
    ///
    /// - Returns: The decoded record, or `nil` when nothing is stored.
    /// - Throws: The error set with ``failReads(with:)``, if any; or the `DecodingError` of a record whose
    ///   `Codable` conformance cannot read back what it wrote.
    public func load() async throws -> PagedData<Value, Cursor>? {
        let stored = try state.withLock { state in
            state.reads += 1
            if let failure = state.readFailure { throw failure }
            return state.stored
        }
        return try stored.map { try $0.decode(PagedData<Value, Cursor>.self) }
    }

    /// Stores `record`, as a paginated callback's `saveDataToCache(newData:)` does: encodes it and keeps
    /// only the serialized form.
    ///
    /// - Parameter record: The record to store, or `nil` to delete the stored one.
    /// - Throws: The error set with ``failWrites(with:)``, if any, or what encoding `record` throws; the
    ///   stored record is unchanged then.
    public func save(_ record: PagedData<Value, Cursor>?) async throws {
        let encoded = try record.map { try StoredValue(encoding: $0) }
        try state.withLock { state in
            if let failure = state.writeFailure { throw failure }
            state.stored = encoded
            state.writes += 1
        }
    }

    // MARK: Inspecting

    /// Decodes the stored record without counting a read and regardless of ``failReads(with:)``.
    ///
    /// - Returns: The decoded record, or `nil` when nothing is stored.
    /// - Throws: The `DecodingError` of a record whose `Codable` conformance cannot read back what it
    ///   wrote.
    public func contents() throws -> PagedData<Value, Cursor>? {
        try state.withLock { $0.stored }.map { try $0.decode(PagedData<Value, Cursor>.self) }
    }

    /// Whether nothing is stored.
    public var isEmpty: Bool {
        state.withLock { $0.stored == nil }
    }

    /// The number of times ``load()`` has been called, including failing calls.
    public var readCount: Int {
        state.withLock { $0.reads }
    }

    /// The number of successful calls to ``save(_:)``, deletions included.
    public var writeCount: Int {
        state.withLock { $0.writes }
    }

    // MARK: Failure injection

    /// Makes every following ``load()`` throw `error`, or stops that with `nil`.
    ///
    /// - Parameter error: The error to throw, or `nil` to read normally again.
    public func failReads(with error: (any Error)?) {
        _ = state.replace(\.readFailure, with: error)
    }

    /// Makes every following ``save(_:)`` throw `error` without changing the stored record, or stops
    /// that with `nil`.
    ///
    /// - Parameter error: The error to throw, or `nil` to write normally again.
    public func failWrites(with error: (any Error)?) {
        _ = state.replace(\.writeFailure, with: error)
    }
}
