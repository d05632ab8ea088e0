/// The storage of a ``MemoryCache``: entries by key with their costs, in least-recently-used order,
/// within a count limit and a cost limit. A pure value: it takes no lock and reads no clock.
///
/// Every operation is O(1) (amortised, like the dictionary and arrays it uses), except ``snapshot()``,
/// ``invalidate(_:)``, ``keysByRecency`` and ``invariantViolations()``, which are O(n). An entry lives in
/// a slot: its payload (key, entry, cost) in ``payloads``, its place in the recency order in ``order``, an
/// ``LRUList`` of slot numbers, and its slot in ``index`` by key. No entry costs an allocation of its own,
/// and a removed entry's slot is reused. A write that replaces an existing key's entry updates its slot
/// in place, hashing the key once.
///
/// **Nothing leaves it under the caller's lock.** Every mutating operation hands back what it took out
/// (replaced, evicted, expired or removed entries, with their keys) instead of letting it drop: the
/// cache calls these operations under its lock, and a value's or key's `deinit` is user code that must
/// run after unlocking. For that, a slot's payload and the index hold the same key instance (the one
/// first stored), and a payload is copied out before its slot is cleared, so the last reference to
/// anything removed is in what the operation returns. Only a key's `hash(into:)` and `==` run inside
/// an operation: a dictionary cannot do without them.
///
/// **Specialisation.** The type, and the operations and properties that a cache read or write uses, are
/// `@usableFromInline` and `@inlinable`: ``MemoryCache``'s reads and writes are inlined into the modules
/// that call them with concrete types, and this code is specialised there with them. Unspecialised, its
/// generic code costs several times more than the work itself (runtime type metadata and value witness
/// calls for every nested generic type). The properties are therefore internal, not `private(set)`: only
/// this type's own methods change them.
@usableFromInline
struct LRUStorage<Key: Hashable, Value> {
    /// An entry with what the storage keeps beside it; also what an operation hands back on removal.
    @usableFromInline
    struct Stored {
        /// The key, the same instance as in the index.
        @usableFromInline var key: Key
        /// The entry: value, timestamp and invalidation mark.
        @usableFromInline var entry: CacheEntry<Value>
        /// The entry's cost, counted in ``LRUStorage/totalCost``; never negative.
        @usableFromInline var cost: Int
        /// The storage's write number when the entry was stored: a later write of the key, even of an
        /// equal entry, stores a higher one (see ``LRUStorage/invalidate(_:)``).
        @usableFromInline var sequence: UInt64

        /// Creates the payload of a slot.
        @inlinable
        init(key: Key, entry: CacheEntry<Value>, cost: Int, sequence: UInt64) {
            self.key = key
            self.entry = entry
            self.cost = cost
            self.sequence = sequence
        }
    }

    /// What ``LRUStorage/entry(forKey:now:)`` found.
    @usableFromInline
    enum Lookup {
        /// The entry, now the most recently used.
        case hit(CacheEntry<Value>)
        /// No entry for the key.
        case miss
        /// The entry was past the policy's lifetime: it was removed, and is handed back to be released.
        case expired(Stored)
    }

    /// Entries an operation took out, to be released by the caller after unlocking. The first one is
    /// held inline, so the common cases (one replaced or one evicted entry) allocate nothing.
    @usableFromInline
    struct Removed {
        /// The first entry taken out, if any.
        @usableFromInline var first: Stored?
        /// The entries taken out after the first.
        @usableFromInline var more: [Stored] = []

        /// Creates an empty list.
        @inlinable
        init() {}

        /// Adds `stored` to the entries taken out.
        @inlinable
        mutating func append(_ stored: Stored) {
            if first == nil { first = stored } else { more.append(stored) }
        }

        /// The entries taken out, oldest removal first.
        var all: [Stored] { (first.map { [$0] } ?? []) + more }
    }

    /// The most entries kept; `nil` for no limit.
    @usableFromInline let countLimit: Int?
    /// The highest total cost kept; `nil` for no limit other than `Int.max`.
    @usableFromInline let costLimit: Int?
    /// The policy whose lifetime ``entry(forKey:now:)`` checks.
    @usableFromInline let policy: FreshnessPolicy

    /// Each slot's entry; `nil` in a free slot. Parallel to the slots of ``order``.
    @usableFromInline var payloads: [Stored?] = []
    /// The slots in use, most recently used first, and the free slots.
    @usableFromInline var order = LRUList()
    /// The slot of each stored key.
    @usableFromInline var index: [Key: Int32] = [:]
    /// The sum of the stored entries' costs.
    @usableFromInline var totalCost = 0
    /// The write number of the last stored entry.
    @usableFromInline var lastSequence: UInt64 = 0

    /// Creates empty storage.
    ///
    /// - Parameters:
    ///   - countLimit: The most entries kept, at least 0; `nil` for no limit.
    ///   - costLimit: The highest total cost kept, at least 0; `nil` for no limit.
    ///   - policy: The policy whose lifetime reads check.
    init(countLimit: Int?, costLimit: Int?, policy: FreshnessPolicy) {
        precondition((countLimit ?? 0) >= 0, "MemoryCache: countLimit must not be negative")
        precondition((costLimit ?? 0) >= 0, "MemoryCache: costLimit must not be negative")
        self.countLimit = countLimit
        self.costLimit = costLimit
        self.policy = policy
    }

    /// The number of stored entries, expired ones not yet read included.
    @inlinable var count: Int { order.count }

    // MARK: Reads

    /// Reads the entry of `key`: a hit makes it the most recently used; an entry past the policy's
    /// lifetime at `now` is removed instead. The entry itself (timestamp and mark) is never changed.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - now: The current time, or `nil` when the policy never expires entries.
    /// - Returns: What was found.
    @inlinable
    mutating func entry(forKey key: Key, now: CacheTime?) -> Lookup {
        guard let slot = index[key], let stored = payloads[Int(slot)] else { return .miss }
        if let now, policy.isPastLifetime(storedAt: stored.entry.storedAt, now: now) {
            return .expired(remove(slot: slot))
        }
        order.moveToNewest(slot)
        return .hit(stored.entry)
    }

    /// The entry of `key` and its cost, without touching recency or expiry.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The stored entry, or `nil`.
    func peek(_ key: Key) -> Stored? {
        index[key].flatMap { payloads[Int($0)] }
    }

    /// The stored keys, most recently used first.
    var keysByRecency: [Key] {
        order.slotsByRecency.compactMap { payloads[Int($0)]?.key }
    }

    // MARK: Writes

    /// Stores `entry` under `key` as the most recently used entry, replacing any previous entry of the
    /// key, then evicts least recently used entries until the limits hold again.
    ///
    /// The new entry is never evicted to make room for itself: when it fits the limits alone, the
    /// others go first. When it does not (its cost exceeds the cost limit, or the count limit is 0), it
    /// is not stored, and the key's previous entry is removed all the same, so the key never reads a
    /// value older than the last write.
    ///
    /// - Parameters:
    ///   - entry: The entry to store, timestamp and mark as given.
    ///   - key: Its key.
    ///   - cost: Its cost; a negative cost counts as 0.
    /// - Returns: The previous entry of the key and the evicted entries, to be released by the caller.
    @inlinable
    mutating func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, cost: Int) -> Removed {
        let cost = max(cost, 0)
        let countLimit = countLimit ?? .max
        let costLimit = costLimit ?? .max
        var removed = Removed()
        let existing = index[key]
        guard cost <= costLimit, countLimit > 0 else {
            if let existing { removed.append(remove(slot: existing)) }
            return removed
        }
        lastSequence &+= 1
        // `cost <= costLimit`, so `costLimit - cost` cannot overflow, and evicting every other entry makes
        // the new one fit: each loop below stops, at the latest, when only the new entry's key is left.
        if let existing, let previous = payloads[Int(existing)] {
            // In place: the slot keeps the key instance the index holds (see the type's discussion), and
            // the previous entry goes to `removed` before it is overwritten, so it is not released here.
            // The count does not change; the cost may have grown.
            removed.append(previous)
            payloads[Int(existing)] = Stored(key: previous.key, entry: entry, cost: cost, sequence: lastSequence)
            totalCost -= previous.cost
            order.moveToNewest(existing)
            while order.oldest != existing, totalCost > costLimit - cost {
                removed.append(remove(slot: order.oldest))
            }
        } else {
            // Evicting first lets the new entry take an evicted entry's slot: the storage never holds more
            // slots than the count limit.
            while order.count > 0, count >= countLimit || totalCost > costLimit - cost {
                removed.append(remove(slot: order.oldest))
            }
            let slot = order.insertNewest()
            let stored = Stored(key: key, entry: entry, cost: cost, sequence: lastSequence)
            if Int(slot) == payloads.count { payloads.append(stored) } else { payloads[Int(slot)] = stored }
            index[key] = slot
        }
        totalCost += cost
        return removed
    }

    /// Removes the entry of `key`, if any.
    ///
    /// - Parameter key: The key to remove.
    /// - Returns: The removed entry, to be released by the caller.
    mutating func removeEntry(forKey key: Key) -> Stored? {
        guard let slot = index[key] else { return nil }
        return remove(slot: slot)
    }

    /// Marks the entry of `key`, if any, as invalidated, in place: value, timestamp, cost, recency and
    /// write number are kept.
    ///
    /// - Parameter key: The key to invalidate.
    /// - Returns: Whether an entry was found.
    @discardableResult
    mutating func invalidateEntry(forKey key: Key) -> Bool {
        guard let slot = index[key] else { return false }
        payloads[Int(slot)]?.entry.isInvalidated = true
        return true
    }

    /// Every stored key with the write number of its entry, for ``invalidate(_:)``.
    ///
    /// - Returns: The keys and write numbers, in no particular order.
    func snapshot() -> [(key: Key, sequence: UInt64)] {
        var keys: [(key: Key, sequence: UInt64)] = []
        keys.reserveCapacity(count)
        for case let stored? in payloads { keys.append((stored.key, stored.sequence)) }
        return keys
    }

    /// Marks as invalidated each listed entry that is still the one ``snapshot()`` saw: an entry stored
    /// since (a higher write number) or a removed key is left alone.
    ///
    /// - Parameter entries: Keys with the write numbers ``snapshot()`` returned.
    /// - Returns: How many entries were marked.
    @discardableResult
    mutating func invalidate(_ entries: [(key: Key, sequence: UInt64)]) -> Int {
        var marked = 0
        for (key, sequence) in entries {
            guard let slot = index[key], payloads[Int(slot)]?.sequence == sequence else { continue }
            payloads[Int(slot)]?.entry.isInvalidated = true
            marked += 1
        }
        return marked
    }

    /// Removes the entry in `slot` from the index and the order, and clears its payload.
    ///
    /// - Parameter slot: A used slot.
    /// - Returns: Its entry, which holds the last reference to everything removed.
    @inlinable
    mutating func remove(slot: Int32) -> Stored {
        guard let stored = payloads[Int(slot)] else {
            preconditionFailure("LRUStorage: the index points at a free slot")
        }
        // `stored` keeps the value and the key alive: neither is released by these lines.
        payloads[Int(slot)] = nil
        index[stored.key] = nil
        order.remove(slot)
        totalCost -= stored.cost
        return stored
    }
}

extension LRUStorage {
    /// Everything wrong with the storage's structure, for tests: an empty list when the order, the
    /// payloads, the index, the total cost and the limits agree.
    ///
    /// - Returns: One description per broken invariant.
    func invariantViolations() -> [String] {
        var problems = order.invariantViolations()
        if payloads.count != order.slotCount {
            problems.append("\(payloads.count) payloads for \(order.slotCount) slots")
            return problems
        }
        let used = order.slotsByRecency
        var cost = 0
        for slot in used {
            guard let stored = payloads[Int(slot)] else {
                problems.append("the used slot \(slot) has no payload")
                continue
            }
            if index[stored.key] != slot { problems.append("the index does not point at slot \(slot)") }
            cost += stored.cost
        }
        let payloadCount = payloads.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
        if payloadCount != used.count { problems.append("\(payloadCount) payloads, \(used.count) used slots") }
        if index.count != used.count { problems.append("the index has \(index.count) keys, \(used.count) used slots") }
        if cost != totalCost { problems.append("total cost is \(totalCost), the entries cost \(cost)") }
        if let countLimit, count > countLimit { problems.append("\(count) entries, over the limit \(countLimit)") }
        if let costLimit, totalCost > costLimit { problems.append("total cost \(totalCost) over \(costLimit)") }
        return problems
    }
}
