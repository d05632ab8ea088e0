#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The default ``DiskCacheCoder``: keys and values as JSON.
///
/// Keys are encoded with sorted object keys, so that a key type with several properties always gives
/// the same bytes. Values use the encoder and decoder you pass, so you can choose their date and data
/// strategies.
///
/// It may be used from any task, concurrently (`JSONEncoder` and `JSONDecoder` are thread-safe); do not
/// change the encoder or decoder you passed after creating the coder.
public struct JSONDiskCacheCoder<Key: Codable, Value: Codable>: DiskCacheCoder {
    private let keyEncoder: JSONEncoder
    private let keyDecoder = JSONDecoder()
    private let valueEncoder: JSONEncoder
    private let valueDecoder: JSONDecoder

    /// Creates a JSON coder.
    ///
    /// - Parameters:
    ///   - valueEncoder: Encodes values; a plain `JSONEncoder` by default.
    ///   - valueDecoder: Decodes values; a plain `JSONDecoder` by default.
    public init(valueEncoder: JSONEncoder = JSONEncoder(), valueDecoder: JSONDecoder = JSONDecoder()) {
        let keyEncoder = JSONEncoder()
        keyEncoder.outputFormatting = [.sortedKeys]
        self.keyEncoder = keyEncoder
        self.valueEncoder = valueEncoder
        self.valueDecoder = valueDecoder
    }

    /// Encodes `key` as JSON with sorted object keys.
    ///
    /// - Parameter key: The key.
    /// - Returns: Its JSON bytes.
    /// - Throws: What `JSONEncoder` throws.
    public func encodeKey(_ key: Key) throws -> Data { try keyEncoder.encode(key) }

    /// Decodes a key from JSON.
    ///
    /// - Parameter data: JSON bytes.
    /// - Returns: The key.
    /// - Throws: What `JSONDecoder` throws.
    public func decodeKey(from data: Data) throws -> Key { try keyDecoder.decode(Key.self, from: data) }

    /// Encodes `value` as JSON with the value encoder.
    ///
    /// - Parameter value: The value.
    /// - Returns: Its JSON bytes.
    /// - Throws: What `JSONEncoder` throws.
    public func encodeValue(_ value: Value) throws -> Data { try valueEncoder.encode(value) }

    /// Decodes a value from JSON with the value decoder.
    ///
    /// - Parameter data: JSON bytes.
    /// - Returns: The value.
    /// - Throws: What `JSONDecoder` throws.
    public func decodeValue(from data: Data) throws -> Value { try valueDecoder.decode(Value.self, from: data) }
}
