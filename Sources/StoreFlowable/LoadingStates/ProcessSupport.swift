/// Gives a main-actor class `run`, `cancel` and `reset` for its own ``ProcessState`` properties: the
/// seed library Processed's `ProcessSupport`, with each instance's task slots its own.
///
/// ```swift
/// @MainActor @Observable
/// final class EditorModel: ProcessSupport {
///     enum Action { case save, delete }
///     var action: ProcessState<Action> = .idle
///     @ObservationIgnored let loadingSlots = LoadingSlots()
///
///     func save() {
///         run(\.action, as: .save) { try await saveDraft() }
///     }
/// }
/// ```
///
/// Each property has a slot in the instance's ``loadingSlots``, which works like a
/// ``ProcessController``: a new process of the property cancels the running one, and only the current
/// process writes the property. The property is written on the main actor: `.running(kind)` at once,
/// inside ``run(_:as:silently:priority:interrupts:timeout:onInterrupt:_:)``, and the end when the process
/// ends.
///
/// A slot is found by its key path, which is rooted at the class whose code calls the method: in a
/// class hierarchy, `\Base.value` and `\Sub.value` name two slots for one property. Load a property
/// from one class of the hierarchy (or make the class `final`).
///
/// For an actor, or code off the main actor, hold a ``ProcessController`` instead.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
public protocol ProcessSupport: AnyObject {
    /// The task slots of this instance: declare `let loadingSlots = LoadingSlots()`.
    var loadingSlots: LoadingSlots { get }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ProcessSupport {
    /// Runs the process `kind` into `property` in a task the instance owns, and returns at once; see
    /// ``ProcessController/run(_:silently:priority:interrupts:timeout:onInterrupt:_:)``.
    ///
    /// - Parameters:
    ///   - property: The property that shows the process.
    ///   - kind: Which process this is.
    ///   - silently: When `true`, the property keeps its value until the process ends.
    ///   - priority: The priority of the task.
    ///   - interrupts: Delays after which `onInterrupt` runs while the process goes on; they add up.
    ///   - timeout: When set, a process still running after this long fails with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the process.
    ///   - work: The process.
    /// - Returns: The task that runs the process.
    @discardableResult
    public func run<Kind: Sendable>(
        _ property: ReferenceWritableKeyPath<Self, ProcessState<Kind>>, as kind: Kind, silently: Bool = false,
        priority: TaskPriority? = nil, interrupts: [Duration] = [], timeout: Duration? = nil,
        onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Void
    ) -> Task<Void, Never> {
        let slot = loadingSlots.slot(for: property, of: self)
        let id = begin(slot, kind, silently: silently)
        let plan = Interrupts.plan(interrupts, timeout, loadingSlots.clock, onInterrupt)
        let task = Task(priority: priority) { [runner = slot.runner] in
            await runner.runProcess(id, kind, plan, work)
        }
        slot.runner.adopt(task, for: id)
        return task
    }

    /// Runs the process `kind` into `property` for the calling task, and returns when it has ended; see
    /// ``ProcessController/runAndWait(_:silently:interrupts:timeout:onInterrupt:_:)``.
    ///
    /// - Parameters:
    ///   - property: The property that shows the process.
    ///   - kind: Which process this is.
    ///   - silently: When `true`, the property keeps its value until the process ends.
    ///   - interrupts: Delays after which `onInterrupt` runs while the process goes on; they add up.
    ///   - timeout: When set, a process still running after this long fails with ``TimeoutError``.
    ///   - onInterrupt: Runs at each interrupt with its time since the start; throwing ends the process.
    ///   - work: The process.
    public func runAndWait<Kind: Sendable>(
        _ property: ReferenceWritableKeyPath<Self, ProcessState<Kind>>, as kind: Kind, silently: Bool = false,
        interrupts: [Duration] = [], timeout: Duration? = nil,
        onInterrupt: @escaping @Sendable (Duration) throws -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Void
    ) async {
        let slot = loadingSlots.slot(for: property, of: self)
        let id = begin(slot, kind, silently: silently)
        await slot.runner.runProcess(
            id, kind, Interrupts.plan(interrupts, timeout, loadingSlots.clock, onInterrupt), work)
        slot.sync()
    }

    /// Cancels the running process of `property`: its end is not written; a `.running` value goes back
    /// to what was there before the process.
    ///
    /// - Parameter property: The property whose process to cancel.
    public func cancel<Kind: Sendable>(_ property: ReferenceWritableKeyPath<Self, ProcessState<Kind>>) {
        let slot = loadingSlots.slot(for: property, of: self)
        _ = slot.runner.cancel()
        slot.sync()
    }

    /// Cancels the running process of `property`, if any, and sets it to ``ProcessState/idle``.
    ///
    /// - Parameter property: The property to reset.
    public func reset<Kind: Sendable>(_ property: ReferenceWritableKeyPath<Self, ProcessState<Kind>>) {
        let slot = loadingSlots.slot(for: property, of: self)
        _ = slot.runner.reset(to: .idle)
        slot.sync()
    }

    private func begin<Kind: Sendable>(
        _ slot: PropertySlot<Self, ProcessState<Kind>>, _ kind: Kind, silently: Bool
    ) -> UInt64 {
        // The owner's own value when no load runs and the property is up to date (a load that ended
        // off the main actor may not be mirrored yet: then its end is the state before the new load).
        slot.adoptPropertyValue()
        let (id, _) = slot.runner.start(showing: silently ? nil : .running(kind))
        slot.sync()
        return id
    }
}
