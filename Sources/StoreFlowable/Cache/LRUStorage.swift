/// The storage of a ``MemoryCache``: entries by key with their costs, in least-recently-used order,
/// within a count limit and a cost limit. A pure value: it takes no lock and reads no clock.
///
/// Every operation is O(1) (amortised, like the dictionary and array it uses), except ``snapshot()``,
/// ``invalidate(_:)``, ``keysByRecency`` and ``invariantViolations()``, which are O(n). The recency list
/// is doubly linked through indices into one contiguous array of nodes, not through objects: an entry
/// costs no allocation of its own, and a removed node's slot goes on a free list for the next insert.
///
/// **Nothing leaves it under the caller's lock.** Every mutating operation hands back what it took out
/// (replaced, evicted, expired or removed entries, with their keys) instead of letting it drop: the
/// cache calls these operations under its lock, and a value's or key's `deinit` is user code that must
/// run after unlocking. For that, the node of a key and the index hold the same key instance (the one
/// first stored), and a node's payload is copied out before its slot is cleared, so the last reference
/// to anything removed is in what the operation returns. Only a key's `hash(into:)` and `==` run inside
/// an operation: a dictionary cannot do without them.
struct LRUStorage<Key: Hashable, Value> {
    /// An entry with what the storage keeps beside it; also what an operation hands back on removal.
    struct Stored {
        /// The key, the same instance as in the index.
        var key: Key
        /// The entry: value, timestamp and invalidation mark.
        var entry: CacheEntry<Value>
        /// The entry's cost, counted in ``LRUStorage/totalCost``; never negative.
        var cost: Int
        /// The storage's write number when the entry was stored: a later write of the key, even of an
        /// equal entry, stores a higher one (see ``LRUStorage/invalidate(_:)``).
        var sequence: UInt64
    }

    /// What ``LRUStorage/entry(forKey:now:)`` found.
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
    struct Removed {
        /// The first entry taken out, if any.
        private(set) var first: Stored?
        /// The entries taken out after the first.
        private(set) var more: [Stored] = []

        /// Adds `stored` to the entries taken out.
        mutating func append(_ stored: Stored) {
            if first == nil { first = stored } else { more.append(stored) }
        }

        /// The entries taken out, oldest removal first.
        var all: [Stored] { (first.map { [$0] } ?? []) + more }
    }

    /// One slot of ``nodes``: an entry in the recency list, or a free slot.
    struct Node {
        /// The entry; `nil` in a free slot.
        var stored: Stored?
        /// The slot of the next more recently used entry; `-1` for the most recent.
        var newer: Int32
        /// The slot of the next less recently used entry, or in a free slot the next free slot; `-1`
        /// for none.
        var older: Int32
    }

    /// No slot.
    static var none: Int32 { -1 }

    /// The most entries kept; `nil` for no limit.
    let countLimit: Int?
    /// The highest total cost kept; `nil` for no limit other than `Int.max`.
    let costLimit: Int?
    /// The policy whose lifetime ``entry(forKey:now:)`` checks.
    let policy: FreshnessPolicy

    /// Every slot, used or free.
    private(set) var nodes: [Node] = []
    /// The slot of each stored key.
    private(set) var index: [Key: Int32] = [:]
    /// The most recently used entry's slot.
    private(set) var newest = Self.none
    /// The least recently used entry's slot: the next to be evicted.
    private(set) var oldest = Self.none
    /// The first free slot; free slots are chained through ``Node/older``.
    private(set) var firstFree = Self.none
    /// The sum of the stored entries' costs.
    private(set) var totalCost = 0
    /// The write number of the next stored entry.
    private var nextSequence: UInt64 = 0

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
    var count: Int { index.count }

    // MARK: Reads

    /// Reads the entry of `key`: a hit makes it the most recently used; an entry past the policy's
    /// lifetime at `now` is removed instead. The entry itself (timestamp and mark) is never changed.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - now: The current time, or `nil` when the policy never expires entries.
    /// - Returns: What was found.
    mutating func entry(forKey key: Key, now: CacheTime?) -> Lookup {
        guard let slot = index[key], let stored = nodes[Int(slot)].stored else { return .miss }
        if let now, policy.isPastLifetime(storedAt: stored.entry.storedAt, now: now) {
            return .expired(remove(slot: slot))
        }
        moveToNewest(slot)
        return .hit(stored.entry)
    }

    /// The entry of `key` and its cost, without touching recency or expiry.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The stored entry, or `nil`.
    func peek(_ key: Key) -> Stored? {
        index[key].flatMap { nodes[Int($0)].stored }
    }

    /// The stored keys, most recently used first.
    var keysByRecency: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var slot = newest
        while slot != Self.none, let stored = nodes[Int(slot)].stored {
            keys.append(stored.key)
            slot = nodes[Int(slot)].older
        }
        return keys
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
    mutating func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, cost: Int) -> Removed {
        let cost = max(cost, 0)
        let countLimit = countLimit ?? .max
        let costLimit = costLimit ?? .max
        var removed = Removed()
        // The key instance the index already holds is kept for the new node, so that the index and the
        // node keep sharing one instance (see the type's discussion).
        var storedKey = key
        if let slot = index[key] {
            let previous = remove(slot: slot)
            storedKey = previous.key
            removed.append(previous)
        }
        guard cost <= costLimit, countLimit > 0 else { return removed }
        // `cost <= costLimit`, so `costLimit - cost` cannot overflow, and evicting every other entry makes
        // the new one fit: the loop stops at an empty list at the latest.
        while oldest != Self.none, count >= countLimit || totalCost > costLimit - cost {
            removed.append(remove(slot: oldest))
        }
        nextSequence &+= 1
        let slot = allocate(Stored(key: storedKey, entry: entry, cost: cost, sequence: nextSequence))
        index[storedKey] = slot
        totalCost += cost
        linkAsNewest(slot)
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
        nodes[Int(slot)].stored?.entry.isInvalidated = true
        return true
    }

    /// Every stored key with the write number of its entry, for ``invalidate(_:)``.
    ///
    /// - Returns: The keys and write numbers, in no particular order.
    func snapshot() -> [(key: Key, sequence: UInt64)] {
        var keys: [(key: Key, sequence: UInt64)] = []
        keys.reserveCapacity(count)
        for node in nodes {
            if let stored = node.stored { keys.append((stored.key, stored.sequence)) }
        }
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
            guard let slot = index[key], nodes[Int(slot)].stored?.sequence == sequence else { continue }
            nodes[Int(slot)].stored?.entry.isInvalidated = true
            marked += 1
        }
        return marked
    }

    // MARK: The list

    /// Unlinks the entry in `slot`, removes it from the index and frees the slot.
    ///
    /// - Parameter slot: A used slot.
    /// - Returns: Its entry, which holds the last reference to everything removed.
    private mutating func remove(slot: Int32) -> Stored {
        guard let stored = nodes[Int(slot)].stored else {
            preconditionFailure("LRUStorage: the index points at a free slot")
        }
        unlink(slot)
        // `stored` keeps the value and the key alive: neither is released by these two lines.
        nodes[Int(slot)].stored = nil
        index[stored.key] = nil
        totalCost -= stored.cost
        nodes[Int(slot)].older = firstFree
        firstFree = slot
        return stored
    }

    /// Puts `stored` in a free slot, or a new one.
    ///
    /// - Parameter stored: The entry.
    /// - Returns: Its slot, not yet linked.
    private mutating func allocate(_ stored: Stored) -> Int32 {
        if firstFree != Self.none {
            let slot = firstFree
            firstFree = nodes[Int(slot)].older
            nodes[Int(slot)] = Node(stored: stored, newer: Self.none, older: Self.none)
            return slot
        }
        precondition(nodes.count < Int(Int32.max), "MemoryCache: more than 2^31 - 1 entries")
        nodes.append(Node(stored: stored, newer: Self.none, older: Self.none))
        return Int32(nodes.count - 1)
    }

    /// Takes the entry in `slot` out of the recency list.
    private mutating func unlink(_ slot: Int32) {
        let (newer, older) = (nodes[Int(slot)].newer, nodes[Int(slot)].older)
        if newer == Self.none { newest = older } else { nodes[Int(newer)].older = older }
        if older == Self.none { oldest = newer } else { nodes[Int(older)].newer = newer }
        nodes[Int(slot)].newer = Self.none
        nodes[Int(slot)].older = Self.none
    }

    /// Links the unlinked entry in `slot` as the most recently used.
    private mutating func linkAsNewest(_ slot: Int32) {
        nodes[Int(slot)].newer = Self.none
        nodes[Int(slot)].older = newest
        if newest == Self.none { oldest = slot } else { nodes[Int(newest)].newer = slot }
        newest = slot
    }

    /// Makes the entry in `slot` the most recently used.
    private mutating func moveToNewest(_ slot: Int32) {
        guard slot != newest else { return }
        unlink(slot)
        linkAsNewest(slot)
    }
}

extension LRUStorage {
    /// Everything wrong with the storage's structure, for tests: an empty list when the list, the index,
    /// the free list, the total cost and the limits agree.
    ///
    /// - Returns: One description per broken invariant.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        var seen = Set<Int32>()
        var slot = newest
        var previous = Self.none
        var cost = 0
        while slot != Self.none {
            guard slot >= 0, Int(slot) < nodes.count, seen.insert(slot).inserted else {
                problems.append("the list reaches slot \(slot) twice or out of range")
                break
            }
            let node = nodes[Int(slot)]
            if node.newer != previous { problems.append("slot \(slot) links back to \(node.newer), not \(previous)") }
            if let stored = node.stored {
                if index[stored.key] != slot { problems.append("the index does not point at slot \(slot)") }
                cost += stored.cost
            } else {
                problems.append("the list holds the free slot \(slot)")
            }
            previous = slot
            slot = node.older
        }
        if oldest != previous { problems.append("oldest is \(oldest), the list ends at \(previous)") }
        if seen.count != index.count { problems.append("the list has \(seen.count) entries, the index \(index.count)") }
        if cost != totalCost { problems.append("total cost is \(totalCost), the entries cost \(cost)") }
        var free = firstFree
        var freeCount = 0
        while free != Self.none, freeCount <= nodes.count {
            if nodes[Int(free)].stored != nil { problems.append("the free list holds the used slot \(free)") }
            freeCount += 1
            free = nodes[Int(free)].older
        }
        if freeCount + seen.count != nodes.count {
            problems.append("\(freeCount) free and \(seen.count) used slots, \(nodes.count) in all")
        }
        if let countLimit, count > countLimit { problems.append("\(count) entries, over the limit \(countLimit)") }
        if let costLimit, totalCost > costLimit { problems.append("total cost \(totalCost) over \(costLimit)") }
        return problems
    }
}
