/// A cache shared by a whole app: one instance per kind of data, reached through a type.
///
/// Conform a marker type (a case-less `enum`) and give it the instance as a `static let`:
///
/// ```swift
/// enum UserCache: SharedCache {
///     static let shared = MemoryCache<Int, User>(countLimit: 1_000, policy: FreshnessPolicy(freshFor: .seconds(300)))
/// }
///
/// let users = KeyedStore(cache: UserCache.shared) { id in try await api.user(id) }
/// try await UserCache.invalidateEntry(forKey: 42)  // the static conveniences forward to `shared`
/// ```
///
/// Every use of `UserCache.shared`, from any module, task or actor, is the same instance, so every
/// store and every direct access sees the same entries. Any ``KeyedCache`` can be shared this way: a
/// ``MemoryCache``, a disk cache, a ``TieredCache`` of both, or your own.
///
/// **Why a `static let` is safe under Swift 6.** A `static let` is initialised lazily, on first access,
/// exactly once, even when many threads reach it at the same moment: the runtime guards the
/// initialiser with a once-only lock (`swift_once`), and every later access reads the stored value.
/// After that the property never changes, and the value it holds is `Sendable` (``KeyedCache``
/// requires it), so strict concurrency lets every task and actor read it with no isolation. A
/// `static var` would be global mutable state: under strict concurrency it does not compile ("static
/// property 'shared' is not concurrency-safe because it is nonisolated global shared mutable state").
/// To replace the cache in tests, pass the cache to the code that uses it rather than reaching for
/// `shared` inside that code.
public protocol SharedCache {
    /// The type of the shared cache.
    associatedtype Cache: KeyedCache

    /// The one instance of the cache; declare it as a `static let`.
    static var shared: Cache { get }
}

extension SharedCache {
    /// Reads the entry of `key` from ``shared``.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: What ``KeyedCache/entry(forKey:)`` of ``shared`` returns.
    /// - Throws: What ``KeyedCache/entry(forKey:)`` of ``shared`` throws.
    public static func entry(forKey key: Cache.Key) async throws -> CacheEntry<Cache.Value>? {
        try await shared.entry(forKey: key)
    }

    /// Stores `entry` under `key` in ``shared``.
    ///
    /// - Parameters:
    ///   - entry: The entry to store.
    ///   - key: Its key.
    /// - Throws: What ``KeyedCache/setEntry(_:forKey:)`` of ``shared`` throws.
    public static func setEntry(_ entry: CacheEntry<Cache.Value>, forKey key: Cache.Key) async throws {
        try await shared.setEntry(entry, forKey: key)
    }

    /// Removes the entry of `key` from ``shared``.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: What ``KeyedCache/removeEntry(forKey:)`` of ``shared`` throws.
    public static func removeEntry(forKey key: Cache.Key) async throws {
        try await shared.removeEntry(forKey: key)
    }

    /// Marks the entry of `key` in ``shared`` as invalidated.
    ///
    /// - Parameter key: The key to invalidate.
    /// - Throws: What ``KeyedCache/invalidateEntry(forKey:)`` of ``shared`` throws.
    public static func invalidateEntry(forKey key: Cache.Key) async throws {
        try await shared.invalidateEntry(forKey: key)
    }

    /// Marks every entry of ``shared`` whose key satisfies `isIncluded` as invalidated.
    ///
    /// - Parameter isIncluded: Chooses the keys to invalidate.
    /// - Throws: What ``KeyedCache/invalidateEntries(where:)`` of ``shared`` throws.
    public static func invalidateEntries(where isIncluded: @escaping @Sendable (Cache.Key) -> Bool) async throws {
        try await shared.invalidateEntries(where: isIncluded)
    }

    /// Removes every entry of ``shared``.
    ///
    /// - Throws: What ``KeyedCache/removeAllEntries()`` of ``shared`` throws.
    public static func removeAllEntries() async throws {
        try await shared.removeAllEntries()
    }
}
