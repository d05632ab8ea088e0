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
    /// An `Int` key, and a `String` key of printable ASCII characters that JSON does not escape, are
    /// written directly, without a `JSONEncoder`: the bytes are the ones `JSONEncoder` writes (`42`,
    /// `"ada"`), so caches written before read the same, and every read and write of a cache keyed by
    /// them saves the encoder's cost (about 3 µs).
    ///
    /// - Parameter key: The key.
    /// - Returns: Its JSON bytes.
    /// - Throws: What `JSONEncoder` throws.
    public func encodeKey(_ key: Key) throws -> Data {
        if let bytes = Self.plainJSON(of: key) { return bytes }
        return try keyEncoder.encode(key)
    }

    /// The JSON of `key` when it is an `Int`, or a `String` whose every character is printable ASCII
    /// that `JSONEncoder` writes as it is (not `"`, `\` or `/`, which it escapes); `nil` otherwise.
    static func plainJSON(of key: Key) -> Data? {
        if let number = key as? Int { return Data(String(number).utf8) }
        guard let text = key as? String else { return nil }
        var bytes = Data(capacity: text.utf8.count + 2)
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"),
                byte != UInt8(ascii: "/")
            else { return nil }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
        return bytes
    }

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
