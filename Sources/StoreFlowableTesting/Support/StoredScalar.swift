/// A type ``StoredValue`` stores as one scalar rather than through its `Codable` containers: `Bool`,
/// `String`, and every integer and floating-point type a coder must support.
///
/// The encoder and decoder check for it before calling `encode(to:)` or `init(from:)`, which for these
/// types would ask a single-value container to encode or decode the same value again.
protocol StoredScalar {
    /// The value's stored form.
    var storedValue: StoredValue { get }

    /// Reads a value from its stored form, or fails when `storedValue` is not one of this type.
    init?(storedValue: StoredValue)
}

extension StoredScalar where Self: Numeric & LosslessStringConvertible {
    /// A number stored as its `description`.
    var storedValue: StoredValue { .number(description) }

    /// Parses a stored number; fails for anything else, and for a number this type cannot hold
    /// exactly (such as `3.5` or `300` for `Int8`).
    init?(storedValue: StoredValue) {
        guard case .number(let text) = storedValue else { return nil }
        self.init(text)
    }
}

extension Bool: StoredScalar {
    /// A stored Boolean.
    var storedValue: StoredValue { .bool(self) }

    /// Reads a stored Boolean; fails for anything else.
    init?(storedValue: StoredValue) {
        guard case .bool(let value) = storedValue else { return nil }
        self = value
    }
}

extension String: StoredScalar {
    /// A stored string.
    var storedValue: StoredValue { .string(self) }

    /// Reads a stored string; fails for anything else.
    init?(storedValue: StoredValue) {
        guard case .string(let value) = storedValue else { return nil }
        self = value
    }
}

extension Double: StoredScalar {}
extension Float: StoredScalar {}
extension Int: StoredScalar {}
extension Int8: StoredScalar {}
extension Int16: StoredScalar {}
extension Int32: StoredScalar {}
extension Int64: StoredScalar {}
extension UInt: StoredScalar {}
extension UInt8: StoredScalar {}
extension UInt16: StoredScalar {}
extension UInt32: StoredScalar {}
extension UInt64: StoredScalar {}
