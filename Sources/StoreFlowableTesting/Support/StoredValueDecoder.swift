/// The `Decoder` that reads a value back from a ``StoredValue`` through its `Decodable` conformance.
///
/// It reports mismatches the way Foundation's coders do: `DecodingError.keyNotFound` for a missing
/// key, `.valueNotFound` for a `null` or a missing array element where a value is required, and
/// `.typeMismatch` for a value of another kind.
struct StoredValueDecoder: Decoder {
    /// The stored form this decoder reads.
    let value: StoredValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Decodes a value of `type` from `value`: a scalar directly, anything else through its
    /// `init(from:)`.
    static func decode<T: Decodable>(_ type: T.Type, from value: StoredValue, codingPath: [any CodingKey]) throws
        -> T
    {
        guard let scalarType = T.self as? any StoredScalar.Type else {
            return try T(from: StoredValueDecoder(value: value, codingPath: codingPath))
        }
        if let scalar = scalarType.init(storedValue: value) as? T { return scalar }
        let context = DecodingError.Context(
            codingPath: codingPath, debugDescription: "Expected \(T.self) but found \(value.kind).")
        if case .null = value { throw DecodingError.valueNotFound(T.self, context) }
        throw DecodingError.typeMismatch(T.self, context)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .keyed(let entries) = value else {
            throw mismatch([String: StoredValue].self, expected: "a keyed value")
        }
        return KeyedDecodingContainer(Keyed<Key>(entries: entries, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw mismatch([StoredValue].self, expected: "an array")
        }
        return Unkeyed(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        Single(value: value, codingPath: codingPath)
    }

    /// The error for a container of the wrong kind.
    private func mismatch(_ type: Any.Type, expected: String) -> DecodingError {
        let context = DecodingError.Context(
            codingPath: codingPath, debugDescription: "Expected \(expected) but found \(value.kind).")
        if case .null = value { return DecodingError.valueNotFound(type, context) }
        return DecodingError.typeMismatch(type, context)
    }

    /// A keyed container reading the entries of a keyed value.
    ///
    /// Its one generic `decode` also witnesses the container's `Bool`, `String` and number overloads.
    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let entries: [String: StoredValue]
        let codingPath: [any CodingKey]

        var allKeys: [Key] { entries.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool {
            entries[key.stringValue] != nil
        }

        /// The entry under `key`.
        private func entry(_ key: Key) throws -> StoredValue {
            guard let entry = entries[key.stringValue] else {
                throw DecodingError.keyNotFound(
                    key,
                    DecodingError.Context(
                        codingPath: codingPath, debugDescription: "No value for key \"\(key.stringValue)\"."))
            }
            return entry
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            if case .null = try entry(key) { return true }
            return false
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try StoredValueDecoder.decode(type, from: entry(key), codingPath: codingPath + [key])
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try StoredValueDecoder(value: entry(key), codingPath: codingPath + [key]).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try StoredValueDecoder(value: entry(key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            let key = StoredValue.Key.superKey
            return StoredValueDecoder(value: entries[key.stringValue] ?? .null, codingPath: codingPath + [key])
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            StoredValueDecoder(value: entries[key.stringValue] ?? .null, codingPath: codingPath + [key])
        }
    }

    /// An unkeyed container reading the elements of an array value in order.
    ///
    /// Its one generic `decode` also witnesses the container's `Bool`, `String` and number overloads.
    private struct Unkeyed: UnkeyedDecodingContainer {
        let elements: [StoredValue]
        let codingPath: [any CodingKey]
        private(set) var currentIndex = 0

        init(elements: [StoredValue], codingPath: [any CodingKey]) {
            self.elements = elements
            self.codingPath = codingPath
        }

        var count: Int? { elements.count }
        var isAtEnd: Bool { currentIndex >= elements.count }

        /// The coding path of the current element.
        private var currentPath: [any CodingKey] { codingPath + [StoredValue.Key(intValue: currentIndex)] }

        /// The current element, which the caller then consumes.
        private func current(_ type: Any.Type) throws -> StoredValue {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    type,
                    DecodingError.Context(
                        codingPath: currentPath, debugDescription: "Unkeyed container is at its end."))
            }
            return elements[currentIndex]
        }

        mutating func decodeNil() throws -> Bool {
            guard case .null = try current(Never.self) else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let decoded = try StoredValueDecoder.decode(type, from: current(type), codingPath: currentPath)
            currentIndex += 1
            return decoded
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let container = try StoredValueDecoder(value: current([String: StoredValue].self), codingPath: currentPath)
                .container(keyedBy: type)
            currentIndex += 1
            return container
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let container = try StoredValueDecoder(value: current([StoredValue].self), codingPath: currentPath)
                .unkeyedContainer()
            currentIndex += 1
            return container
        }

        mutating func superDecoder() throws -> any Decoder {
            let decoder = try StoredValueDecoder(value: current(Never.self), codingPath: currentPath)
            currentIndex += 1
            return decoder
        }
    }

    /// A single-value container reading the whole value.
    ///
    /// Its one generic `decode` also witnesses the container's `Bool`, `String` and number overloads.
    private struct Single: SingleValueDecodingContainer {
        let value: StoredValue
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool {
            if case .null = value { return true }
            return false
        }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try StoredValueDecoder.decode(type, from: value, codingPath: codingPath)
        }
    }
}
