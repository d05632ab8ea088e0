/// Gives a main-actor class `load`, `cancel` and `reset` for its own ``LoadableState`` properties:
/// the seed library Processed's `LoadableSupport`, with each instance's task slots its own.
///
/// ```swift
/// @MainActor @Observable
/// final class NumbersModel: LoadableSupport {
///     var numbers: LoadableState<[Int]> = .absent
///     @ObservationIgnored let loadingSlots = LoadingSlots()
///
///     func refresh() {
///         load(\.numbers) { try await fetchNumbers() }
///     }
/// }
/// ```
///
/// Each property has a slot in the instance's ``loadingSlots``, which works like a
/// ``LoadableController``: a new load of the property cancels the running one, and only the current
/// load writes the property (never a superseded, cancelled or reset load). The property is written on
/// the main actor: the start state at once, inside ``load(_:silently:priority:interrupts:timeout:onInterrupt:_:)``,
/// and each later state in order, once. A value the class assigns to the property itself between loads
/// is what a later cancel goes back to.
///
/// A slot is found by its key path, which is rooted at the class whose code calls the method: in a
/// class hierarchy, `\Base.value` and `\Sub.value` name two slots for one property. Load a property
/// from one class of the hierarchy (or make the class `final`).
///
/// For an actor, or code off the main actor, hold a ``LoadableController`` instead: it works from any
/// isolation.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
public protocol LoadableSupport: AnyObject {
    /// The task slots of this instance: declare `let loadingSlots = LoadingSlots()`.
    var loadingSlots: LoadingSlots { get }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension LoadableSupport {
    /// Loads a value into `property` in a task the instance owns, and returns at once; see
    /// ``LoadableController/load(silently:priority:interrupts:timeout:onInterrupt:_:)``.
    ///
    /// - Parameters:
    ///   - property: The property to load into.
    ///   - silently: When `true`, the property keeps its value until the load ends.
    ///   - priority: The priority of the task.
    ///   - interrupts: Delays after which `onInterrupt` runs while the load goes on; they add up.
    ///   - timeout: When set, a load still running after this long ends with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the load.
    ///   - work: Loads the value.
    /// - Returns: The task that runs the load.
    @discardableResult
    public func load<Value: Sendable>(
        _ property: ReferenceWritableKeyPath<Self, LoadableState<Value>>, silently: Bool = false,
        priority: TaskPriority? = nil, interrupts: [Duration] = [], timeout: Duration? = nil,
        onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Value
    ) -> Task<Void, Never> {
        let slot = loadingSlots.slot(for: property, of: self)
        let id = begin(slot, silently: silently)
        let plan = Interrupts.plan(interrupts, timeout, loadingSlots.clock, onInterrupt)
        let task = Task(priority: priority) { [runner = slot.runner] in
            await runner.runLoad(id, plan) { try await work() }
        }
        slot.runner.adopt(task, for: id)
        return task
    }

    /// Loads a value into `property` for the calling task, and returns when the load has ended; see
    /// ``LoadableController/loadAndWait(silently:interrupts:timeout:onInterrupt:_:)``.
    ///
    /// - Parameters:
    ///   - property: The property to load into.
    ///   - silently: When `true`, the property keeps its value until the load ends.
    ///   - interrupts: Delays after which `onInterrupt` runs while the load goes on; they add up.
    ///   - timeout: When set, a load still running after this long ends with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the load.
    ///   - work: Loads the value.
    public func loadAndWait<Value: Sendable>(
        _ property: ReferenceWritableKeyPath<Self, LoadableState<Value>>, silently: Bool = false,
        interrupts: [Duration] = [], timeout: Duration? = nil,
        onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Value
    ) async {
        let slot = loadingSlots.slot(for: property, of: self)
        let id = begin(slot, silently: silently)
        await slot.runner.runLoad(id, Interrupts.plan(interrupts, timeout, loadingSlots.clock, onInterrupt), work)
        slot.sync()
    }

    /// Runs a load of `property` that yields states over time, in a task the instance owns; see
    /// ``LoadableController/loadStreaming(silently:priority:interrupts:timeout:onInterrupt:_:)``.
    ///
    /// - Parameters:
    ///   - property: The property to load into.
    ///   - silently: When `true`, the property keeps its value until the first yield.
    ///   - priority: The priority of the task.
    ///   - interrupts: Delays after which `onInterrupt` runs while the load goes on; they add up.
    ///   - timeout: When set, a load still running after this long ends with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the load.
    ///   - work: Yields the states of the load.
    /// - Returns: The task that runs the load.
    @discardableResult
    public func loadStreaming<Value: Sendable>(
        _ property: ReferenceWritableKeyPath<Self, LoadableState<Value>>, silently: Bool = false,
        priority: TaskPriority? = nil, interrupts: [Duration] = [], timeout: Duration? = nil,
        onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable (LoadableYield<Value>) async throws -> Void
    ) -> Task<Void, Never> {
        let slot = loadingSlots.slot(for: property, of: self)
        let id = begin(slot, silently: silently)
        let plan = Interrupts.plan(interrupts, timeout, loadingSlots.clock, onInterrupt)
        let task = Task(priority: priority) { [runner = slot.runner] in
            await runner.runStream(id, plan, work)
        }
        slot.runner.adopt(task, for: id)
        return task
    }

    /// Cancels the running load of `property`: nothing it produces is written; a `.loading` value goes
    /// back to what was there before the load.
    ///
    /// - Parameter property: The property whose load to cancel.
    public func cancel<Value: Sendable>(_ property: ReferenceWritableKeyPath<Self, LoadableState<Value>>) {
        let slot = loadingSlots.slot(for: property, of: self)
        _ = slot.runner.cancel()
        slot.sync()
    }

    /// Cancels the running load of `property`, if any, and sets it to ``LoadableState/absent``.
    ///
    /// - Parameter property: The property to reset.
    public func reset<Value: Sendable>(_ property: ReferenceWritableKeyPath<Self, LoadableState<Value>>) {
        let slot = loadingSlots.slot(for: property, of: self)
        _ = slot.runner.reset(to: .absent)
        slot.sync()
    }

    private func begin<Value: Sendable>(_ slot: PropertySlot<Self, LoadableState<Value>>, silently: Bool) -> UInt64 {
        // The owner's own value when no load runs and the property is up to date (a load that ended
        // off the main actor may not be mirrored yet: then its end is the state before the new load).
        slot.adoptPropertyValue()
        let (id, _) = slot.runner.start(showing: silently ? nil : .loading)
        slot.sync()
        return id
    }
}
