import StoreFlowable

extension LockedValue {
    /// Replaces the part of the value at `keyPath` with `newValue` and returns what it held, so that
    /// the caller drops the old part after the lock is released.
    ///
    /// Dropping the last reference to a value a test supplied may run its `deinit`, which is code of
    /// the test and must not run under the lock (see "Locking" at ``WaiterList``). Discard the result
    /// with `_ =`: it is released when the call returns, after unlocking.
    ///
    /// - Parameters:
    ///   - keyPath: The part to replace.
    ///   - newValue: The new part.
    /// - Returns: The part the value held before.
    func replace<Part>(_ keyPath: WritableKeyPath<Value, Part>, with newValue: Part) -> Part {
        withLock { value in
            let old = value[keyPath: keyPath]
            value[keyPath: keyPath] = newValue
            return old
        }
    }
}
