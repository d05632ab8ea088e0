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

    private var slots: [SlotKey: KeySlot] = [:]
    /// Advanced after every completed write that replaced a key's data; stores read it before reading
    /// the cache (see ``WriteEpoch``).
    @usableFromInline nonisolated let writeEpoch = WriteEpoch()
    /// For keys whose slot was released: the latest ``KeySlot/replacedEpoch`` of the released slots
    /// whose key hashes into each bucket. A new slot starts from its bucket's value, so a read that began
    /// before a released key's last write still reads again (rarely, another key of the bucket makes a
    /// read go again needlessly); the memory is fixed.
    private var releasedEpochs = [UInt64](repeating: 0, count: 128)
    /// Above every id and version any released slot handed out; new slots start above it.
    private var releasedIDs: UInt64 = 0
    private var idleErrors: ErrorRetention<SlotKey>
    /// How the stores of this manager call the origin (retries, concurrency limit), unless a callback
    /// returns its own ``StoreFlowableCallback/fetchPolicy``.
    public nonisolated let fetchPolicy: FetchPolicy
    /// The observer that receives the events of this manager's stores, if any.
    public nonisolated var observer: (any StoreEventObserver)? { observerBox?.observer }
    /// The observer in a box of its own: the cache-hit path holds this one reference across the cache
    /// read instead of an existential (which measured about 25 ns more per hit, observer or not).
    @usableFromInline nonisolated let observerBox: ObserverBox?

    /// Creates a manager that tracks no key yet.
    ///
    /// - Parameters:
    ///   - rememberedErrorLimit: How many keys nobody uses any more may be kept only to remember their
    ///     last error (so that the next subscriber still sees it). Beyond this, the oldest such keys are
    ///     forgotten and start from `.fixed` again. Values below zero count as zero. The default keeps
    ///     memory bounded on servers where failures happen for ever-new keys.
    ///   - fetchPolicy: How the stores of this manager call the origin: retries with backoff and a
    ///     concurrency limit. By default, one attempt per fetch and no limit.
    ///   - observer: Receives the events of this manager's stores (cache hits and misses, fetches,
    ///     retries, stale values served, invalidations), for metrics and logs; `nil` by default, which
    ///     costs one nil check per event.
    public init(
        rememberedErrorLimit: Int = 1_000, fetchPolicy: FetchPolicy = FetchPolicy(),
        observer: (any StoreEventObserver)? = nil
    ) {
        idleErrors = ErrorRetention(limit: rememberedErrorLimit)
        self.fetchPolicy = fetchPolicy
        observerBox = observer.map(ObserverBox.init)
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
        let slotKey = SlotKey(key: key, dataType: ObjectIdentifier(Data.self))
        guard let slot = slots[slotKey] else { return }
        slot.machine.clearError()
        releaseIfIdle(slotKey, slot)
    }

    // MARK: Slots
    // The slots hold the data as `ErasedData`, so everything below is compiled once, for concrete types:
    // only the key is generic. `Data` appears as a metatype, to tell the slots of two data types apart.

    func existingSlot<Data: Sendable>(for key: Key, _: Data.Type) -> KeySlot? {
        slots[SlotKey(key: key, dataType: ObjectIdentifier(Data.self))]
    }

    /// Releases the key if idle; keeps it, within the retention limit, if only its error is left.
    private func releaseIfIdle(_ slotKey: SlotKey, _ slot: KeySlot) {
        if slot.machine.isIdle {
            release(slotKey)
            idleErrors.remove(slotKey)
        } else if slot.machine.isIdleExceptForError {
            // Every key the retention forgets is idle but for its error, so dropping it loses no caller.
            for forgotten in idleErrors.retain(slotKey) { release(forgotten) }
        } else {
            idleErrors.remove(slotKey)
        }
    }

    private func release(_ slotKey: SlotKey) {
        guard let slot = slots.removeValue(forKey: slotKey) else { return }
        releasedIDs = max(releasedIDs, slot.highestIssuedID)
        let bucket = Self.bucket(of: slotKey)
        releasedEpochs[bucket] = max(releasedEpochs[bucket], slot.replacedEpoch)
    }

    private static func bucket(of slotKey: SlotKey) -> Int {
        Int(UInt(bitPattern: slotKey.hashValue) % 128)
    }

    /// Applies `transition` to the machine of `key` for data type `dataType`, releases the key if idle,
    /// and returns the effects.
    ///
    /// - Parameters:
    ///   - creating: Whether an untracked key gets a new slot. When `false` (events that can arrive
    ///     late, after the key was released), an untracked key is left alone and the effects are empty.
    /// - Returns: The effects to run outside the actor.
    func apply<Data: Sendable>(
        _ key: Key, _ dataType: Data.Type, creating: Bool = true,
        _ transition: (inout KeySlot.Machine) -> KeySlot.Machine.Action
    ) -> KeyEffects {
        let slotKey = SlotKey(key: key, dataType: ObjectIdentifier(Data.self))
        let slot: KeySlot
        if let existing = slots[slotKey] {
            slot = existing
        } else {
            guard creating else { return .none }
            slot = KeySlot(firstID: releasedIDs &+ 1)
            slot.replacedEpoch = releasedEpochs[Self.bucket(of: slotKey)]
            slots[slotKey] = slot
        }
        let replacedBefore = slot.machine.replacedVersion
        let action = transition(&slot.machine)
        if slot.machine.replacedVersion != replacedBefore { slot.replacedEpoch = writeEpoch.advance() }
        let effects = slot.effects(for: action)
        releaseIfIdle(slotKey, slot)
        return effects
    }

    // MARK: Events (called by stores)

    /// Attaches a `publish()` stream unless it already terminated.
    func subscribe<Data: Sendable>(_ key: Key, _: Data.Type, _ subscriber: Subscription)
        -> (registered: (id: UInt64, version: UInt64)?, effects: KeyEffects)
    {
        var registered: (id: UInt64, version: UInt64)?
        let effects = apply(key, Data.self) { machine in
            let (id, version) = machine.subscribe(subscriber)
            guard subscriber.activate(id) else {
                // The stream ended before it was registered: remove it before anything reaches it.
                return machine.unsubscribe(id)
            }
            registered = (id, version)
            return .none
        }
        return (registered, effects)
    }

    func initialRead<Data: Sendable>(
        _ key: Key, subscriber id: UInt64, version: UInt64, cached: Data?, isValid: Bool, forceRefresh: Bool,
        usableUntil: CacheTime? = nil, now: CacheTime? = nil
    ) -> KeyEffects {
        let cached: ErasedData? = cached
        return apply(key, Data.self) { machine in
            machine.initialRead(
                subscriber: id, version: version, cached: cached, isValid: isValid, forceRefresh: forceRefresh,
                usableUntil: usableUntil, now: now)
        }
    }

    func unsubscribe<Data: Sendable>(_ key: Key, _: Data.Type, subscriber id: UInt64) -> KeyEffects {
        apply(key, Data.self, creating: false) { machine in machine.unsubscribe(id) }
    }

    /// Adds a caller that waits for the key's next outcome, starting a flight if none exists.
    ///
    /// - Returns: The waiter's id; whether it joined a flight that already existed (one calling the
    ///   origin, or one held back until a cancelled flight's origin call returns) rather than creating
    ///   one, which may have to wait for such a call itself; and the effects.
    func join<Data: Sendable>(_ key: Key, _: Data.Type, _ waiter: OneShot<ErasedData>)
        -> (id: UInt64, joinedExisting: Bool, effects: KeyEffects)
    {
        var id: UInt64 = 0
        var joinedExisting = false
        let effects = apply(key, Data.self) { machine in
            joinedExisting = machine.flight != nil
            let (joined, action) = machine.join(waiter)
            id = joined
            return action
        }
        return (id, joinedExisting, effects)
    }

    /// Joins the key's flight after a cache read that found nothing valid, unless the read may have
    /// missed a write: when no flight runs and a write replaced the data after `readEpoch` was read, the
    /// caller is not joined and must read again.
    ///
    /// - Parameter readEpoch: The ``writeEpoch`` read before the cache read.
    /// - Returns: The waiter's id, or `nil` when the caller must read again; whether it joined a flight
    ///   that already existed (see ``join(_:_:_:)``); and the effects.
    func join<Data: Sendable>(_ key: Key, _: Data.Type, _ waiter: OneShot<ErasedData>, readEpoch: UInt64)
        -> (id: UInt64?, joinedExisting: Bool, effects: KeyEffects)
    {
        if readMayHaveMissedWrite(key, Data.self, readEpoch: readEpoch) { return (nil, false, .none) }
        let (id, joinedExisting, effects) = join(key, Data.self, waiter)
        return (id, joinedExisting, effects)
    }

    /// Whether a cache read that began at `readEpoch` may have missed a write: no flight runs for `key`
    /// (a running flight is joined whatever was written before it) and a write replaced its data since.
    private func readMayHaveMissedWrite<Data: Sendable>(_ key: Key, _: Data.Type, readEpoch: UInt64) -> Bool {
        let slotKey = SlotKey(key: key, dataType: ObjectIdentifier(Data.self))
        let replacedEpoch: UInt64
        if let slot = slots[slotKey] {
            replacedEpoch = slot.machine.flight == nil ? slot.replacedEpoch : 0
        } else {
            replacedEpoch = releasedEpochs[Self.bucket(of: slotKey)]
        }
        return replacedEpoch > readEpoch
    }

    func leave<Data: Sendable>(_ key: Key, _: Data.Type, waiter id: UInt64) -> KeyEffects {
        apply(key, Data.self, creating: false) { machine in machine.leave(id) }
    }

    func flightReturned<Data: Sendable>(
        _ key: Key, _: Data.Type, flight id: UInt64, writer: OneShot<Bool>
    ) -> (decision: KeySlot.Machine.FetchReturnDecision, effects: KeyEffects) {
        var decision = KeySlot.Machine.FetchReturnDecision.discard
        let effects = apply(key, Data.self, creating: false) { machine in
            let (decided, action) = machine.flightReturned(id, writer: writer)
            decision = decided
            return action
        }
        return (decision, effects)
    }

    func flightFailed<Data: Sendable>(_ key: Key, _: Data.Type, flight id: UInt64, error: any Error)
        -> KeyEffects
    {
        apply(key, Data.self, creating: false) { machine in machine.flightFailed(id, error: error) }
    }

    func flightSaved<Data: Sendable>(_ key: Key, flight id: UInt64, data: Data, usableUntil: CacheTime? = nil)
        -> KeyEffects
    {
        let data: ErasedData = data
        return apply(key, Data.self) { machine in machine.flightSaved(id, data: data, usableUntil: usableUntil) }
    }

    func flightSaveFailed<Data: Sendable>(_ key: Key, _: Data.Type, flight id: UInt64, error: any Error)
        -> KeyEffects
    {
        apply(key, Data.self) { machine in machine.flightSaveFailed(id, error: error) }
    }

    func beginUpdate<Data: Sendable>(_ key: Key, _ writer: OneShot<Bool>, _: Data.Type)
        -> (id: UInt64, mayWriteNow: Bool, effects: KeyEffects)
    {
        var id: UInt64 = 0
        var mayWriteNow = false
        let effects = apply(key, Data.self) { machine in
            let (began, mayWrite, action) = machine.beginUpdate(writer)
            (id, mayWriteNow) = (began, mayWrite)
            return action
        }
        return (id, mayWriteNow, effects)
    }

    func finishUpdate<Data: Sendable>(
        _ key: Key, update id: UInt64, newData: Data?, error: (any Error)?, usableUntil: CacheTime? = nil
    ) -> KeyEffects {
        let newData: ErasedData? = newData
        return apply(key, Data.self) { machine in
            machine.finishUpdate(id, newData: newData, error: error, usableUntil: usableUntil)
        }
    }

    func finishUpdateUnchanged<Data: Sendable>(_ key: Key, _: Data.Type, update id: UInt64) -> KeyEffects {
        apply(key, Data.self) { machine in machine.finishUpdateUnchanged(id) }
    }

    /// Starts a background fetch of `key` for a stale-while-revalidate read (or pins the running one),
    /// unless the read may have missed a write: when no flight runs and a write replaced the data after
    /// `readEpoch`, the value read is already outdated and a newer one is cached.
    ///
    /// - Parameter readEpoch: The ``writeEpoch`` read before the cache read.
    /// - Returns: The effects.
    func revalidate<Data: Sendable>(_ key: Key, _: Data.Type, readEpoch: UInt64) -> KeyEffects {
        if readMayHaveMissedWrite(key, Data.self, readEpoch: readEpoch) { return .none }
        return apply(key, Data.self) { machine in machine.revalidate() }
    }

    func beginInvalidation<Data: Sendable>(_ key: Key, _ writer: OneShot<Bool>, _: Data.Type)
        -> (id: UInt64, mayWriteNow: Bool, effects: KeyEffects)
    {
        var id: UInt64 = 0
        var mayWriteNow = false
        let effects = apply(key, Data.self) { machine in
            let (began, mayWrite, action) = machine.beginInvalidation(writer)
            (id, mayWriteNow) = (began, mayWrite)
            return action
        }
        return (id, mayWriteNow, effects)
    }

    func finishInvalidation<Data: Sendable>(_ key: Key, _: Data.Type, invalidation id: UInt64) -> KeyEffects {
        apply(key, Data.self) { machine in machine.finishInvalidation(id) }
    }

    /// Begins a reload of `key` if the manager tracks it (see `KeyStateMachine.beginReload(_:)`).
    ///
    /// - Returns: `nil` when the key is not tracked (its next read reads the cache anyway); otherwise
    ///   the reload's id, whether it may read now, whether it must mark the cached value stale first,
    ///   and the effects.
    func beginReload<Data: Sendable>(_ key: Key, _ writer: OneShot<Bool>, _: Data.Type)
        -> (id: UInt64, mayReadNow: Bool, mustMark: Bool, effects: KeyEffects)?
    {
        guard existingSlot(for: key, Data.self) != nil else { return nil }
        var began: (id: UInt64, mayReadNow: Bool, mustMark: Bool)?
        let effects = apply(key, Data.self, creating: false) { machine in
            let (id, mayReadNow, mustMark, action) = machine.beginReload(writer)
            began = (id, mayReadNow, mustMark)
            return action
        }
        guard let began else { return nil }
        return (began.id, began.mayReadNow, began.mustMark, effects)
    }

    func finishReload<Data: Sendable>(
        _ key: Key, reload id: UInt64, cached: Data?, isFresh: Bool, usableUntil: CacheTime? = nil
    ) -> KeyEffects {
        let cached: ErasedData? = cached
        return apply(key, Data.self) { machine in
            machine.finishReload(id, cached: cached, isFresh: isFresh, usableUntil: usableUntil)
        }
    }

    /// The keys of data type `dataType` whose state the manager keeps now (see ``trackedKeyCount``).
    ///
    /// - Parameter dataType: The `Data` type of the stores that use the keys.
    /// - Returns: The keys, in no particular order.
    public func trackedKeys<Data: Sendable>(of dataType: Data.Type) -> [Key] {
        let type = ObjectIdentifier(Data.self)
        return slots.keys.compactMap { $0.dataType == type ? $0.key : nil }
    }

    /// The number of writers queued behind the one writing the cache for `key`, for race tests.
    func writeQueueLength<Data: Sendable>(for key: Key, _: Data.Type) -> Int {
        existingSlot(for: key, Data.self)?.machine.writeQueue.count ?? 0
    }

    /// Whether nothing runs for `key` and nobody uses it (a remembered error aside), for tests.
    func isIdle<Data: Sendable>(_ key: Key, _: Data.Type) -> Bool {
        guard let machine = existingSlot(for: key, Data.self)?.machine else { return true }
        return machine.isIdle || machine.isIdleExceptForError
    }

    /// The subscriber and waiter counts of `key`, for leak checks.
    func registryCounts<Data: Sendable>(for key: Key, _: Data.Type) -> (subscribers: Int, waiters: Int) {
        guard let slot = existingSlot(for: key, Data.self) else { return (0, 0) }
        return (slot.machine.subscribers.count, slot.machine.waiters.count)
    }
}
