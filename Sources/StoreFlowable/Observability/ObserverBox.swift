/// A manager's ``StoreEventObserver``, boxed so that a store can hold it as one class reference.
@usableFromInline
final class ObserverBox: Sendable {
    @usableFromInline let observer: any StoreEventObserver

    init(_ observer: any StoreEventObserver) {
        self.observer = observer
    }
}
