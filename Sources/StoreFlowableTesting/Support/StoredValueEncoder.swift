/// The `Encoder` that builds a ``StoredValue`` from a value's `Encodable` conformance.
///
/// Encoding writes into a tree of ``Node``s, one per value, which ``Node/stored`` turns into the
/// stored form at the end; containers share their node, so nested containers and `superEncoder()`
/// write into the same tree. The encoder lives only for one ``StoredValue/init(encoding:)`` call, on
/// one task.
struct StoredValueEncoder: Encoder {
    /// The value being built at one place in the tree.
    final class Node {
        /// What the node holds so far.
        private enum Kind {
            case empty
            case scalar(StoredValue)
            case keyed
            case unkeyed
        }

        private var kind = Kind.empty
        private var entries: [String: Node] = [:]
        private var elements: [Node] = []

        /// The number of elements of an unkeyed node.
        var count: Int { elements.count }

        /// The stored form of what was encoded here; a node nothing was encoded into is an empty keyed
        /// value, as a type that encodes no properties produces.
        var stored: StoredValue {
            switch kind {
            case .empty: .keyed([:])
            case .scalar(let value): value
            case .keyed: .keyed(entries.mapValues(\.stored))
            case .unkeyed: .array(elements.map(\.stored))
            }
        }

        /// Makes this node hold `value`.
        func set(_ value: StoredValue) {
            kind = .scalar(value)
        }

        /// Makes this node keyed, keeping entries written by an earlier keyed container.
        func becomeKeyed() {
            if case .keyed = kind { return }
            kind = .keyed
            entries = [:]
        }

        /// Makes this node unkeyed, keeping elements written by an earlier unkeyed container.
        func becomeUnkeyed() {
            if case .unkeyed = kind { return }
            kind = .unkeyed
            elements = []
        }

        /// A new node stored under `key` of this keyed node, replacing any earlier one.
        func child(forKey key: String) -> Node {
            let child = Node()
            entries[key] = child
            return child
        }

        /// A new node appended to this unkeyed node.
        func appendChild() -> Node {
            let child = Node()
            elements.append(child)
            return child
        }
    }

    /// The node this encoder writes into.
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Encodes `value` into `node`: a scalar directly, anything else through its `encode(to:)`.
    static func encode(_ value: some Encodable, into node: Node, codingPath: [any CodingKey]) throws {
        if let scalar = value as? any StoredScalar {
            node.set(scalar.storedValue)
        } else {
            try value.encode(to: StoredValueEncoder(node: node, codingPath: codingPath))
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeKeyed()
        return KeyedEncodingContainer(Keyed<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeUnkeyed()
        return Unkeyed(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        Single(node: node, codingPath: codingPath)
    }

    /// A keyed container writing entries of a keyed node.
    ///
    /// Its one generic `encode` also witnesses the container's `Bool`, `String` and number overloads.
    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws {
            node.child(forKey: key.stringValue).set(.null)
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try StoredValueEncoder.encode(
                value, into: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            StoredValueEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
                .container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            StoredValueEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
                .unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let key = StoredValue.Key.superKey
            return StoredValueEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            StoredValueEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
        }
    }

    /// An unkeyed container appending elements to an unkeyed node.
    ///
    /// Its one generic `encode` also witnesses the container's `Bool`, `String` and number overloads.
    private struct Unkeyed: UnkeyedEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]

        var count: Int { node.count }

        /// The coding path of the element about to be appended.
        private var nextPath: [any CodingKey] { codingPath + [StoredValue.Key(intValue: node.count)] }

        mutating func encodeNil() throws {
            node.appendChild().set(.null)
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let path = nextPath
            try StoredValueEncoder.encode(value, into: node.appendChild(), codingPath: path)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            let path = nextPath
            return StoredValueEncoder(node: node.appendChild(), codingPath: path).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let path = nextPath
            return StoredValueEncoder(node: node.appendChild(), codingPath: path).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let path = nextPath
            return StoredValueEncoder(node: node.appendChild(), codingPath: path)
        }
    }

    /// A single-value container setting the node's value.
    ///
    /// Its one generic `encode` also witnesses the container's `Bool`, `String` and number overloads.
    private struct Single: SingleValueEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]

        mutating func encodeNil() throws {
            node.set(.null)
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            try StoredValueEncoder.encode(value, into: node, codingPath: codingPath)
        }
    }
}
