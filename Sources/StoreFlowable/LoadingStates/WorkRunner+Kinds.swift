/// The runs of each kind of work: a load (its value), a streaming load (its yields), a process (its kind).

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension WorkRunner {
    /// Runs a load whose work returns its value.
    func runLoad<Value: Sendable>(
        _ id: UInt64, _ plan: [Interrupts], _ work: @escaping @Sendable () async throws -> Value,
        notify: @Sendable () -> Void = {}
    ) async where State == LoadableState<Value> {
        await run(
            id, interrupts: plan, work: { .loaded(try await work()) }, failure: LoadableState.error,
            resetState: .absent, isCancelSignal: { $0 is CancelLoadable }, isResetSignal: { $0 is ResetLoadable },
            notify: notify)
    }

    /// Runs a streaming load: `work` gets a ``LoadableYield`` that writes only while the load is current.
    func runStream<Value: Sendable>(
        _ id: UInt64, _ plan: [Interrupts], _ work: @escaping @Sendable (LoadableYield<Value>) async throws -> Void,
        notify: @escaping @Sendable () -> Void = {}
    ) async where State == LoadableState<Value> {
        let yield = LoadableYield(runner: self, id: id, notify: notify)
        await run(
            id, interrupts: plan,
            work: {
                try await work(yield)
                return nil
            },
            failure: LoadableState.error, resetState: .absent, isCancelSignal: { $0 is CancelLoadable },
            isResetSignal: { $0 is ResetLoadable }, notify: notify)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension WorkRunner {
    /// Runs the process `kind`.
    func runProcess<Kind: Sendable>(
        _ id: UInt64, _ kind: Kind, _ plan: [Interrupts], _ work: @escaping @Sendable () async throws -> Void,
        notify: @Sendable () -> Void = {}
    ) async where State == ProcessState<Kind> {
        await run(
            id, interrupts: plan,
            work: {
                try await work()
                return .finished(kind)
            },
            failure: { .failed(process: kind, error: $0) }, resetState: .idle,
            isCancelSignal: { $0 is CancelProcess }, isResetSignal: { $0 is ResetProcess }, notify: notify)
    }
}
