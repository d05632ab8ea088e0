/// A value in the serialized form ``PersistentPagedCache`` keeps, built from a value's `Codable`
/// conformance: a tree of null, Boolean, number, string, array and keyed values, like a JSON document,
/// without Foundation.
///
/// Encoding into this form and decoding out of it goes through the same `encode(to:)` and
/// `init(from:)` a JSON or property-list coder would call, so a type that survives the round trip here
/// keeps in its `Codable` conformance everything it needs. The tree holds no reference to the encoded
/// value: what comes out is always a new value.
enum StoredValue: Sendable, Equatable {
    /// An encoded `nil`.
    case null
    /// An encoded `Bool`.
    case bool(Bool)
    /// An encoded number, as its `description`; decoding parses it back with the number type's
    /// `LosslessStringConvertible` initialiser, which round-trips every integer and floating-point value.
    case number(String)
    /// An encoded `String`.
    case string(String)
    /// The elements of an unkeyed container, in order.
    case array([StoredValue])
    /// The entries of a keyed container, by the keys' `stringValue`.
    case keyed([String: StoredValue])

    /// Encodes `value` into its stored form.
    ///
    /// - Parameter value: The value to encode.
    /// - Throws: What `value`'s `encode(to:)` throws.
    init(encoding value: some Encodable) throws {
        let root = StoredValueEncoder.Node()
        try StoredValueEncoder.encode(value, into: root, codingPath: [])
        self = root.stored
    }

    /// Decodes a value of `type` from this stored form.
    ///
    /// - Parameter type: The type to decode.
    /// - Returns: A new value of `type`.
    /// - Throws: `DecodingError` when this form does not match what `type`'s `init(from:)` reads, or
    ///   what that initialiser throws.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try StoredValueDecoder.decode(type, from: self, codingPath: [])
    }

    /// What kind of value this is, for error messages: `null`, `a Boolean`, `a number`, and so on.
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .keyed: "a keyed value"
        }
    }

    /// A coding key for array elements and superclass containers in coding paths.
    struct Key: CodingKey {
        let stringValue: String
        let intValue: Int?

        init(stringValue: String) {
            self.stringValue = stringValue
            intValue = nil
        }

        init(intValue: Int) {
            stringValue = "Index \(intValue)"
            self.intValue = intValue
        }

        /// The key a superclass's container is stored under, as in JSON coders.
        static let superKey = Key(stringValue: "super")
    }
}
