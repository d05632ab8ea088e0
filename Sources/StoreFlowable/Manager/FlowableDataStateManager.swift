/// Tracks the state of every key of a repository (fixed, loading or error) and coordinates the stores
/// that share it, so that each key has at most one origin fetch in flight.
///
/// Create one manager per kind of data (typically a `static let` next to your callback type) and return
/// it from ``StoreFlowableCallback/flowableDataStateManager``. Every store created from a callback with
/// the same manager and key shares that key's state: its subscribers, its waiters and its single fetch.
/// A key used with two different `Data` types is tracked separately for each type.
///
/// The actor is thin: each key's state is a pure value whose transitions return the effects to run,
/// and the stores run those effects (resuming callers, yielding states, starting and cancelling fetches)
/// after leaving the actor, so no user code ever runs inside it.
///
/// Memory: the state of a key with no subscriber, no waiting caller, no fetch, no write in progress and
/// no error to remember is released as soon as the last of them goes away.
public actor FlowableDataStateManager<Key: Hashable & Sendable> {
    private struct SlotKey: Hashable {
        let key: Key
        let dataType: ObjectIdentifier
    }

    private var slots: [SlotKey: any ReleasableSlot] = [:]
    /// Above every id and version any released slot handed out; new slots start above it.
    private var releasedIDs: UInt64 = 0
    private var idleErrors: ErrorRetention<SlotKey>

    /// Creates a manager that tracks no key yet.
    ///
    /// - Parameter rememberedErrorLimit: How many keys nobody uses any more may be kept only to remember
    ///   their last error (so that the next subscriber still sees it). Beyond this, the oldest such keys
    ///   are forgotten and start from `.fixed` again. Values below zero count as zero. The default keeps
    ///   memory bounded on servers where failures happen for ever-new keys.
    public init(rememberedErrorLimit: Int = 1_000) {
        idleErrors = ErrorRetention(limit: rememberedErrorLimit)
    }

    /// The number of keys (per data type) whose state the manager currently keeps.
    ///
    /// A key is tracked while it has subscribers, waiting callers, a fetch or write in flight, or a
    /// remembered error; it drops to zero once every key is idle. Useful for leak checks in tests.
    public var trackedKeyCount: Int { slots.count }

    /// The state of `key` for stores of data type `dataType`.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - dataType: The `Data` type of the callback that uses the key.
    /// - Returns: `.loading` while a fetch is in flight, `.error` after a failure that nothing has
    ///   resolved yet, otherwise `.fixed` (also for keys the manager does not track).
    public func dataState<Data: Sendable>(for key: Key, of dataType: Data.Type) -> DataState {
        existingSlot(for: key, Data.self)?.machine.status ?? .fixed
    }

    /// Forgets the remembered error of `key`, so the next subscriber starts from `.fixed`.
    ///
    /// Subscribers and fetches in flight are not affected.
    ///
    /// - Parameters:
    ///   - key: The key whose error to forget.
    ///   - dataType: The `Data` type of the callback that uses the key.
    public func resetError<Data: Sendable>(for key: Key, of dataType: Data.Type) {
        existingSlot(for: key, Data.self)?.machine.clearError()
        releaseIfIdle(key, Data.self)
    }

    // MARK: Slots

    func existingSlot<Data: Sendable>(for key: Key, _: Data.Type) -> KeySlot<Data>? {
        guard let object = slots[SlotKey(key: key, dataType: ObjectIdentifier(Data.self))] else { return nil }
        // Safe: every object stored under a SlotKey whose dataType is ObjectIdentifier(Data.self) is a
        // KeySlot<Data>, created by `slot(for:_:)` below and never replaced by another type.
        return unsafeDowncast(object, to: KeySlot<Data>.self)
    }

    private func slot<Data: Sendable>(for key: Key, _: Data.Type) -> KeySlot<Data> {
        if let slot = existingSlot(for: key, Data.self) { return slot }
        let slot = KeySlot<Data>(firstID: releasedIDs &+ 1)
        slots[SlotKey(key: key, dataType: ObjectIdentifier(Data.self))] = slot
        return slot
    }

    /// Releases the key if idle; keeps it, within the retention limit, if only its error is left.
    private func releaseIfIdle<Data: Sendable>(_ key: Key, _: Data.Type) {
        let slotKey = SlotKey(key: key, dataType: ObjectIdentifier(Data.self))
        guard let object = slots[slotKey] else { return }
        // Safe for the same reason as in `existingSlot(for:_:)`.
        let machine = unsafeDowncast(object, to: KeySlot<Data>.self).machine
        if machine.isIdle {
            release(slotKey)
            idleErrors.remove(slotKey)
        } else if machine.isIdleExceptForError {
            // Every key the retention forgets is idle but for its error, so dropping it loses no caller.
            for forgotten in idleErrors.retain(slotKey) { release(forgotten) }
        } else {
            idleErrors.remove(slotKey)
        }
    }

    private func release(_ slotKey: SlotKey) {
        guard let slot = slots.removeValue(forKey: slotKey) else { return }
        releasedIDs = max(releasedIDs, slot.highestIssuedID)
    }

    /// Applies `transition` to the key's machine and returns the effects, releasing the key if idle.
    func apply<Data: Sendable, Result>(
        _ key: Key, _: Data.Type,
        _ transition: (inout KeySlot<Data>.Machine) -> (Result, KeySlot<Data>.Machine.Action)
    ) -> (Result, KeyEffects<Data>) {
        let slot = slot(for: key, Data.self)
        let (result, action) = transition(&slot.machine)
        let effects = slot.effects(for: action)
        releaseIfIdle(key, Data.self)
        return (result, effects)
    }

    // MARK: Events (called by stores)

    /// Attaches a `publish()` stream unless it already terminated.
    func subscribe<Data: Sendable>(_ key: Key, _ subscriber: Subscription<Data>)
        -> (registered: (id: UInt64, version: UInt64)?, effects: KeyEffects<Data>)
    {
        apply(key, Data.self) { machine in
            let (id, version) = machine.subscribe(subscriber)
            guard subscriber.activate(id) else {
                // The stream ended before it was registered: remove it before anything reaches it.
                return (nil, machine.unsubscribe(id))
            }
            return ((id, version), .none)
        }
    }

    func initialRead<Data: Sendable>(
        _ key: Key, subscriber id: UInt64, version: UInt64, cached: Data?, isValid: Bool, forceRefresh: Bool
    ) -> KeyEffects<Data> {
        apply(key, Data.self) { machine in
            (
                (),
                machine.initialRead(
                    subscriber: id, version: version, cached: cached, isValid: isValid, forceRefresh: forceRefresh)
            )
        }.1
    }

    func unsubscribe<Data: Sendable>(_ key: Key, _: Data.Type, subscriber id: UInt64) -> KeyEffects<Data> {
        guard existingSlot(for: key, Data.self) != nil else { return .none }
        return apply(key, Data.self) { machine in ((), machine.unsubscribe(id)) }.1
    }

    func join<Data: Sendable>(_ key: Key, _ waiter: OneShot<Data>) -> (id: UInt64, effects: KeyEffects<Data>) {
        apply(key, Data.self) { machine in machine.join(waiter) }
    }

    func leave<Data: Sendable>(_ key: Key, _: Data.Type, waiter id: UInt64) -> KeyEffects<Data> {
        guard existingSlot(for: key, Data.self) != nil else { return .none }
        return apply(key, Data.self) { machine in ((), machine.leave(id)) }.1
    }

    func flightReturned<Data: Sendable>(
        _ key: Key, _: Data.Type, flight id: UInt64, writer: OneShot<Bool>
    ) -> (decision: KeySlot<Data>.Machine.FetchReturnDecision, effects: KeyEffects<Data>) {
        guard existingSlot(for: key, Data.self) != nil else { return (.discard, .none) }
        return apply(key, Data.self) { machine in machine.flightReturned(id, writer: writer) }
    }

    func flightFailed<Data: Sendable>(_ key: Key, _: Data.Type, flight id: UInt64, error: any Error)
        -> KeyEffects<Data>
    {
        guard existingSlot(for: key, Data.self) != nil else { return .none }
        return apply(key, Data.self) { machine in ((), machine.flightFailed(id, error: error)) }.1
    }

    func flightSaved<Data: Sendable>(_ key: Key, flight id: UInt64, data: Data) -> KeyEffects<Data> {
        apply(key, Data.self) { machine in ((), machine.flightSaved(id, data: data)) }.1
    }

    func flightSaveFailed<Data: Sendable>(_ key: Key, _: Data.Type, flight id: UInt64, error: any Error)
        -> KeyEffects<Data>
    {
        apply(key, Data.self) { machine in ((), machine.flightSaveFailed(id, error: error)) }.1
    }

    func beginUpdate<Data: Sendable>(_ key: Key, _ writer: OneShot<Bool>, _: Data.Type)
        -> (id: UInt64, mayWriteNow: Bool, effects: KeyEffects<Data>)
    {
        let ((id, mayWriteNow), effects) = apply(key, Data.self) { machine in
            let (id, mayWriteNow, action) = machine.beginUpdate(writer)
            return ((id, mayWriteNow), action)
        }
        return (id, mayWriteNow, effects)
    }

    func finishUpdate<Data: Sendable>(_ key: Key, update id: UInt64, newData: Data?, error: (any Error)?)
        -> KeyEffects<Data>
    {
        apply(key, Data.self) { machine in ((), machine.finishUpdate(id, newData: newData, error: error)) }.1
    }

    /// The number of writers queued behind the one writing the cache for `key`, for race tests.
    func writeQueueLength<Data: Sendable>(for key: Key, _: Data.Type) -> Int {
        existingSlot(for: key, Data.self)?.machine.writeQueue.count ?? 0
    }

    /// The subscriber and waiter counts of `key`, for leak checks.
    func registryCounts<Data: Sendable>(for key: Key, _: Data.Type) -> (subscribers: Int, waiters: Int) {
        guard let slot = existingSlot(for: key, Data.self) else { return (0, 0) }
        return (slot.machine.subscribers.count, slot.machine.waiters.count)
    }
}
