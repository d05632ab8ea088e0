public import StoreFlowable

extension LoadingState where Content: Equatable {
    /// An `Equatable` copy of this state, for comparing states in tests; see ``StateSnapshot``.
    public var snapshot: StateSnapshot<Content> {
        StateSnapshot(self)
    }
}

extension AdditionalLoadingState {
    /// An `Equatable` copy of this state, for comparing states in tests; see ``AdditionalSnapshot``.
    public var snapshot: AdditionalSnapshot {
        AdditionalSnapshot(self)
    }
}

extension StateRecorder where Value: Equatable {
    /// Every state received so far as an `Equatable` snapshot, oldest first.
    ///
    /// ```swift
    /// #expect(recorder.snapshots == [.loading(nil), .completed("fresh")])
    /// ```
    public var snapshots: [StateSnapshot<Value>] {
        states.map(StateSnapshot.init)
    }
}
