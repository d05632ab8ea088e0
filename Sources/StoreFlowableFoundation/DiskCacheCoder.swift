#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Turns a ``DiskCache``'s keys and values into bytes and back: JSON with ``JSONDiskCacheCoder`` (the
/// default), or any format of your own (property lists, Protocol Buffers, a hand-written layout).
///
/// The cache stores each entry in a file named after a hash of the encoded key and keeps the encoded
/// key in the file, comparing it byte for byte on every read. So:
///
/// - ``encodeKey(_:)`` must be *deterministic*: equal keys must give equal bytes, in every process and
///   every version of your app that shares the folder. (A key holding a `Set` or a `Dictionary`
///   encoded in its unordered iteration order would give misses.)
/// - Changing the key encoding makes existing entries misses (they are deleted when found); changing
///   the value encoding makes old entries fail to decode, which the cache reports and deletes as
///   damaged. Use a new cache name when you change either on purpose.
///
/// The methods may be called from any task, concurrently, and must not call back into the cache.
public protocol DiskCacheCoder<Key, Value>: Sendable {
    /// The type of the keys.
    associatedtype Key
    /// The type of the values.
    associatedtype Value

    /// Encodes a key. Equal keys must give equal bytes.
    ///
    /// - Parameter key: The key.
    /// - Returns: Its bytes; they are stored in the entry's file and hashed to name it.
    /// - Throws: Any error; the cache reports it as ``DiskCacheError/encodingFailed(_:)``.
    func encodeKey(_ key: Key) throws -> Data

    /// Decodes a key that ``encodeKey(_:)`` encoded (for `invalidateEntries(where:)`).
    ///
    /// - Parameter data: The bytes of one key.
    /// - Returns: The key.
    /// - Throws: Any error; the cache then reports the file as damaged and deletes it.
    func decodeKey(from data: Data) throws -> Key

    /// Encodes a value.
    ///
    /// - Parameter value: The value.
    /// - Returns: Its bytes.
    /// - Throws: Any error; the cache reports it as ``DiskCacheError/encodingFailed(_:)``.
    func encodeValue(_ value: Value) throws -> Data

    /// Decodes a value that ``encodeValue(_:)`` encoded.
    ///
    /// - Parameter data: The bytes of one value.
    /// - Returns: The value.
    /// - Throws: Any error; the cache then reports the file as damaged, deletes it and returns a miss.
    func decodeValue(from data: Data) throws -> Value
}
