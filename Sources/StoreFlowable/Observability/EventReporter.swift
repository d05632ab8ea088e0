/// Reports the events of one key to the manager's observer; does nothing (one nil check) without one.
@usableFromInline
struct EventReporter: Sendable {
    @usableFromInline let observer: (any StoreEventObserver)?
    /// The key, boxed only when there is an observer to report to.
    @usableFromInline let key: (any Hashable & Sendable)?
    @usableFromInline let dataType: any Any.Type

    /// Creates the reporter of `key`; the key is only boxed when `observer` is set.
    @inlinable
    init(observer: (any StoreEventObserver)?, key: @autoclosure () -> any Hashable & Sendable, dataType: any Any.Type) {
        self.observer = observer
        self.key = observer == nil ? nil : key()
        self.dataType = dataType
    }

    /// Reports an event of kind `kind`, built only when an observer is set.
    @inlinable @inline(__always)
    func callAsFunction(_ kind: @autoclosure () -> StoreEvent.Kind) {
        guard let observer else { return }
        observer.observe(StoreEvent(kind(), key: key, dataType: dataType))
    }
}
