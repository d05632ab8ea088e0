/// Compares two values whose types are known only at run time, with `==` when the first one's type is
/// `Equatable`.
///
/// - Parameters:
///   - left: A value.
///   - right: Another value.
/// - Returns: `nil` when `left`'s type is not `Equatable`; otherwise whether `right` is of the same
///   type and equal to it.
func dynamicEquality(_ left: Any, _ right: Any) -> Bool? {
    guard let left = left as? any Equatable else { return nil }
    return isEqual(left, right)
}

/// Whether `other` is a `Value` equal to `value`.
private func isEqual<Value: Equatable>(_ value: Value, _ other: Any) -> Bool {
    (other as? Value) == value
}
