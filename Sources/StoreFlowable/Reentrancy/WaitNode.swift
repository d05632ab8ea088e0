/// One key of one state manager for one data type: a node of the ``WaitGraph``.
struct WaitNode: Hashable, Sendable {
    /// The state manager tracking the key.
    let manager: ObjectIdentifier
    /// The key, its type erased.
    let key: any Hashable & Sendable
    /// The data type of the stores using the key (a key is tracked separately per data type).
    let dataType: ObjectIdentifier

    /// Creates the node of `key` in `manager` for stores of `dataType`.
    init<Key: Hashable & Sendable, Data>(_ manager: FlowableDataStateManager<Key>, _ key: Key, _ dataType: Data.Type) {
        self.manager = ObjectIdentifier(manager)
        self.key = key
        self.dataType = ObjectIdentifier(dataType)
    }

    static func == (lhs: WaitNode, rhs: WaitNode) -> Bool {
        lhs.manager == rhs.manager && lhs.dataType == rhs.dataType && Self.equal(lhs.key, rhs.key)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(manager)
        hasher.combine(dataType)
        hasher.combine(key)
    }

    /// Whether two erased keys are of the same type and equal.
    private static func equal<Left: Hashable>(_ lhs: Left, _ rhs: any Hashable & Sendable) -> Bool {
        guard let rhs = rhs as? Left else { return false }
        return lhs == rhs
    }
}
