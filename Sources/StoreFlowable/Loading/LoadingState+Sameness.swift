/// Whether `old` and `new` are both `nil`, or equal values of an `Equatable` type; values of other types
/// always count as different.
func isSameValue<Value>(_ old: Value?, _ new: Value?) -> Bool {
    switch (old, new) {
    case (nil, nil): true
    case (let old?, let new?): dynamicEquality(old, new) ?? false
    default: false
    }
}

/// Whether `old` and `new` are the same state: the same case, the same content (see ``isSameValue(_:_:)``),
/// the same page states and errors that ``errorsAreEqual(_:_:)`` finds equal. A `Loader` assigns a state
/// only when it is not the same as the one shown.
func isSameState<Content>(_ old: LoadingState<Content>?, _ new: LoadingState<Content>) -> Bool {
    switch (old, new) {
    case (.loading(let old)?, .loading(let new)):
        isSameValue(old, new)
    case (.completed(let old, let oldNext, let oldPrev)?, .completed(let new, let next, let prev)):
        isSameValue(old, new) && isSameAdditional(oldNext, next) && isSameAdditional(oldPrev, prev)
    case (.error(let old, let oldError)?, .error(let new, let error)):
        isSameValue(old, new) && errorsAreEqual(oldError, error)
    default:
        false
    }
}

/// Whether two page states are the same case with equal errors.
private func isSameAdditional(_ old: AdditionalLoadingState, _ new: AdditionalLoadingState) -> Bool {
    switch (old, new) {
    case (.fixed(let old), .fixed(let new)): old == new
    case (.loading, .loading): true
    case (.error(let old), .error(let new)): errorsAreEqual(old, new)
    default: false
    }
}
