/// The task slots of one object that loads into its own properties with ``LoadableSupport`` or
/// ``ProcessSupport``: one slot per property, owned by the object, so two instances of a class never
/// share a slot or cancel each other's work.
///
/// Declare it once in the conforming class: `let loadingSlots = LoadingSlots()`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
public final class LoadingSlots {
    /// The slot of each property, by key path.
    private var slots: [AnyKeyPath: AnyObject] = [:]
    /// The clock of interrupts and timeouts.
    let clock: any Clock<Duration>

    /// Creates the slots of one object.
    ///
    /// - Parameter clock: The clock of interrupts and timeouts; a `ContinuousClock` by default (a
    ///   `ManualClock` from `StoreFlowableTesting` in tests).
    public init(clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = clock
    }

    /// The slot of `property` of `owner`, made on first use from the property's current value.
    func slot<Owner: AnyObject, State: WorkState & Sendable>(
        for property: ReferenceWritableKeyPath<Owner, State>, of owner: Owner
    ) -> PropertySlot<Owner, State> {
        if let slot = slots[property] as? PropertySlot<Owner, State> { return slot }
        let slot = PropertySlot(property: property, owner: owner)
        slots[property] = slot
        return slot
    }
}

/// The slot of one property: a ``WorkRunner`` whose states are written into the property, on the main
/// actor, in order, each once.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
final class PropertySlot<Owner: AnyObject, State: WorkState & Sendable> {
    let runner: WorkRunner<State>
    private let property: ReferenceWritableKeyPath<Owner, State>
    private weak var owner: Owner?
    /// The version of the runner's state last written into the property.
    private var written: UInt64
    /// Writes each new state into the property; ends when the runner is released.
    private var mirroring: Task<Void, Never>?

    init(property: ReferenceWritableKeyPath<Owner, State>, owner: Owner) {
        self.property = property
        self.owner = owner
        runner = WorkRunner(owner[keyPath: property])
        written = runner.snapshot.version
        let states = runner.states()
        mirroring = Task { [weak self] in
            for await _ in states {
                guard let self else { return }
                self.sync()
            }
        }
    }

    deinit {
        mirroring?.cancel()
        runner.close()
    }

    /// Takes the property's current value as the state (the owner may have set it directly) when no
    /// work runs and the property shows the runner's latest state, so that a cancel puts back what the
    /// owner last saw, never a stale value over a load's end that is not mirrored yet.
    func adoptPropertyValue() {
        guard let owner else { return }
        if let version = runner.replace(with: owner[keyPath: property], ifIdleAt: written) { written = version }
    }

    /// Writes the runner's state into the property if it is newer than the last one written.
    func sync() {
        let (state, version) = runner.snapshot
        guard version != written, let owner else { return }
        written = version
        owner[keyPath: property] = state
    }
}
