/// The recency order of ``LRUStorage``: a doubly linked list of slot numbers, most recently used first,
/// with a free list of the slots not in use. A pure value holding no entries, only links.
///
/// The links are indices into one contiguous array, not objects, so a slot costs no allocation of its
/// own, and a removed slot is reused by the next insert. The type is not generic, so its code is
/// compiled for concrete types even where the generic storage around it runs unspecialised (a cache
/// called through generic code from another module). Every operation is O(1) (amortised, like the array
/// it uses), except ``slotsByRecency`` and ``invariantViolations()``, which are O(n).
///
/// The type and the operations a cache read or write uses are `@usableFromInline` and `@inlinable`, like
/// those of ``LRUStorage``, so that those paths are specialised in the modules that use a ``MemoryCache``
/// with concrete types. Only ``LRUStorage`` changes the properties.
@usableFromInline
struct LRUList {
    /// One slot's neighbours.
    @usableFromInline
    struct Link {
        /// The next more recently used slot; ``LRUList/none`` for the most recent. Unused in a free slot.
        @usableFromInline var newer: Int32
        /// The next less recently used slot, or in a free slot the next free slot; ``LRUList/none`` for
        /// none.
        @usableFromInline var older: Int32

        /// Creates the links of a slot.
        @inlinable
        init(newer: Int32, older: Int32) {
            self.newer = newer
            self.older = older
        }
    }

    /// No slot.
    @usableFromInline static let none: Int32 = -1

    /// Every slot's links, used or free; a slot is an index into this array.
    @usableFromInline var links: [Link] = []
    /// The most recently used slot.
    @usableFromInline var newest = none
    /// The least recently used slot: the next to be evicted.
    @usableFromInline var oldest = none
    /// The first free slot; free slots are chained through ``Link/older``.
    @usableFromInline var firstFree = none
    /// The number of slots in the list.
    @usableFromInline var count = 0

    /// Creates an empty list.
    init() {}

    /// The number of slots ever made, used or free: the size a parallel array of payloads needs.
    var slotCount: Int { links.count }

    /// Takes a free slot (or a new one) and links it as the most recently used.
    ///
    /// - Returns: The slot: the first free slot, or a new one (then equal to the old ``slotCount``).
    /// - Precondition: Fewer than `Int32.max` slots are in use.
    @inlinable
    mutating func insertNewest() -> Int32 {
        let slot: Int32
        if firstFree != Self.none {
            slot = firstFree
            firstFree = links[Int(slot)].older
        } else {
            precondition(links.count < Int(Int32.max), "MemoryCache: more than 2^31 - 1 entries")
            slot = Int32(links.count)
            links.append(Link(newer: Self.none, older: Self.none))
        }
        linkAsNewest(slot)
        count += 1
        return slot
    }

    /// Unlinks `slot` and puts it on the free list.
    ///
    /// - Parameter slot: A slot in the list.
    @inlinable
    mutating func remove(_ slot: Int32) {
        unlink(slot)
        links[Int(slot)].older = firstFree
        firstFree = slot
        count -= 1
    }

    /// Makes `slot` the most recently used.
    ///
    /// - Parameter slot: A slot in the list.
    @inlinable
    mutating func moveToNewest(_ slot: Int32) {
        guard slot != newest else { return }
        unlink(slot)
        linkAsNewest(slot)
    }

    /// The slots in the list, most recently used first.
    var slotsByRecency: [Int32] {
        var slots: [Int32] = []
        slots.reserveCapacity(count)
        var slot = newest
        while slot != Self.none, slots.count <= count {
            slots.append(slot)
            slot = links[Int(slot)].older
        }
        return slots
    }

    /// Takes `slot` out of the list, leaving its links cleared.
    @inlinable
    mutating func unlink(_ slot: Int32) {
        let link = links[Int(slot)]
        if link.newer == Self.none { newest = link.older } else { links[Int(link.newer)].older = link.older }
        if link.older == Self.none { oldest = link.newer } else { links[Int(link.older)].newer = link.newer }
        links[Int(slot)] = Link(newer: Self.none, older: Self.none)
    }

    /// Links the unlinked `slot` as the most recently used.
    @inlinable
    mutating func linkAsNewest(_ slot: Int32) {
        links[Int(slot)] = Link(newer: Self.none, older: newest)
        if newest == Self.none { oldest = slot } else { links[Int(newest)].newer = slot }
        newest = slot
    }
}

extension LRUList {
    /// Everything wrong with the list's structure, for tests: an empty list when the recency list runs
    /// both ways, and it and the free list together hold every slot once.
    ///
    /// - Returns: One description per broken invariant.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        var seen = Set<Int32>()
        var slot = newest
        var previous = Self.none
        while slot != Self.none {
            guard slot >= 0, Int(slot) < links.count, seen.insert(slot).inserted else {
                problems.append("the list reaches slot \(slot) twice or out of range")
                break
            }
            let link = links[Int(slot)]
            if link.newer != previous { problems.append("slot \(slot) links back to \(link.newer), not \(previous)") }
            previous = slot
            slot = link.older
        }
        if oldest != previous { problems.append("oldest is \(oldest), the list ends at \(previous)") }
        if seen.count != count { problems.append("the list holds \(seen.count) slots, its count is \(count)") }
        var free = firstFree
        var freeCount = 0
        while free != Self.none {
            guard free >= 0, Int(free) < links.count, !seen.contains(free), freeCount < links.count else {
                problems.append("the free list reaches slot \(free), in use, twice or out of range")
                break
            }
            freeCount += 1
            free = links[Int(free)].older
        }
        if freeCount + seen.count != links.count {
            problems.append("\(freeCount) free and \(seen.count) used slots, \(links.count) in all")
        }
        return problems
    }
}
