/// What a streaming load (``LoadableController/loadStreaming(silently:priority:interrupts:timeout:onInterrupt:_:)``)
/// calls to show a state: `yield(.loaded(partial))`.
///
/// A yield shows its state only while its load is the controller's current one; after the load was
/// superseded, cancelled or reset it does nothing and returns `false`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public struct LoadableYield<Value: Sendable>: Sendable {
    private let runner: WorkRunner<LoadableState<Value>>
    private let id: UInt64
    private let notify: @Sendable () -> Void

    init(runner: WorkRunner<LoadableState<Value>>, id: UInt64, notify: @escaping @Sendable () -> Void) {
        self.runner = runner
        self.id = id
        self.notify = notify
    }

    /// Shows `state` if the load is still the current one.
    ///
    /// - Parameter state: The state to show.
    /// - Returns: Whether it was shown (`false` once the load was stopped).
    @discardableResult
    public func callAsFunction(_ state: LoadableState<Value>) -> Bool {
        guard runner.write(state, from: id) else { return false }
        notify()
        return true
    }
}
