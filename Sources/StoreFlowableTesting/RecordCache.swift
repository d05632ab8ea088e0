/// A cache double that holds one record: ``load()`` reads it and ``save(_:)`` replaces or deletes it.
///
/// ``InMemoryCache`` (which hands back the very value it was given) and ``PersistentPagedCache``
/// (which keeps only the serialized form, like a disk) conform, so the ready-made list callbacks,
/// ``PageNumberListCallback`` and ``ChatHistoryCallback``, take either.
///
/// ```swift
/// let memory = InMemoryCache<PagedData<[Int], Int>>()
/// let disk = PersistentPagedCache<[Int], Int>()
/// let callbacks = [
///     PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api, cache: memory),
///     PageNumberListCallback(key: "feed", manager: FlowableDataStateManager(), api: api, cache: disk),
/// ]
/// ```
public protocol RecordCache<Record>: Sendable {
    /// The type of the record the cache holds.
    associatedtype Record: Sendable

    /// Reads the record, as a callback's `loadDataFromCache()` does.
    ///
    /// - Returns: The record, or `nil` when the cache is empty.
    /// - Throws: The read failure the test scripted, if any.
    func load() async throws -> Record?

    /// Replaces the record, as a callback's `saveDataToCache(newData:)` does.
    ///
    /// - Parameter record: The record to store, or `nil` to empty the cache.
    /// - Throws: The write failure the test scripted, if any; the record is unchanged then.
    func save(_ record: Record?) async throws
}
