import StoreFlowable

/// The cache a ready-made list callback reads and writes: an ``InMemoryCache`` or a
/// ``PersistentPagedCache`` of paged records, behind one pair of operations.
struct PagedCacheAccess<Value: Sendable, Cursor: Sendable>: Sendable {
    private let read: @Sendable () async throws -> PagedData<Value, Cursor>?
    private let write: @Sendable (PagedData<Value, Cursor>?) async throws -> Void

    /// Reads and writes `cache`.
    init(_ cache: InMemoryCache<PagedData<Value, Cursor>>) {
        read = { try await cache.load() }
        write = { try await cache.save($0) }
    }

    /// Reads and writes `cache`, which encodes every record it stores.
    init(_ cache: PersistentPagedCache<Value, Cursor>) where Value: Codable, Cursor: Codable {
        read = { try await cache.load() }
        write = { try await cache.save($0) }
    }

    /// Reads the cached record.
    func load() async throws -> PagedData<Value, Cursor>? { try await read() }

    /// Writes the record, or deletes it with `nil`.
    func save(_ record: PagedData<Value, Cursor>?) async throws { try await write(record) }
}
