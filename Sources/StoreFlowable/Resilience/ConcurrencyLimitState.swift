/// The permits of a ``ConcurrencyLimit`` as a pure value: every event is a `mutating` method that
/// updates the state and returns what to resume, without resuming anything.
///
/// The machine is generic over what it hands back (`Waiter`), so its transitions are tested with plain
/// values and no concurrency. ``ConcurrencyLimit`` instantiates it with continuations, applies events
/// under its lock and resumes the returned waiters after unlocking.
///
/// A caller that finds no free permit arrives in two steps: ``acquire(id:)`` queues its id (this is its
/// place in line), then ``attach(_:to:)`` stores the waiter to resume. Between the two, the entry may be
/// handed the permit (``attach(_:to:)`` then says so and stores nothing) or abandoned by a cancellation
/// (``attach(_:to:)`` then says that instead).
///
/// Invariants, checked by the tests:
/// - `0 <= running <= limit`, and `limit >= 1`.
/// - Entries are handed permits in the order they were queued (FIFO by arrival).
/// - A queued entry exists only while `running == limit`: a release with a queued entry hands its
///   permit on instead of freeing it, so a permit is never free while someone waits.
/// - The storage of the queue is at most about twice the number of queued entries, however many
///   entries are abandoned.
/// - With a bound on the queue, `queuedCount <= maxQueued`: a caller that would queue beyond it is
///   refused and leaves no trace.
struct ConcurrencyLimitState<Waiter> {
    /// Identifies one caller. Ids are never reused; ``ConcurrencyLimit`` hands them out increasing.
    typealias ID = UInt64

    /// What ``acquire(id:)`` did.
    enum Acquisition: Equatable {
        /// A permit was free and is now the caller's (`running` grew by one).
        case granted
        /// No permit was free: the caller is queued behind every earlier caller.
        case queued
        /// No permit was free and the queue already holds ``maxQueued`` callers: the caller is neither
        /// granted nor queued, and nothing changed.
        case refused
    }

    /// What ``attach(_:to:)`` did.
    enum Attachment: Equatable {
        /// The entry is still queued; the waiter is stored and will come back from ``release()`` or
        /// ``abandon(id:)``.
        case waiting
        /// The entry was handed a permit before its waiter arrived; the caller holds the permit now.
        /// The waiter is not stored.
        case granted
        /// The entry was abandoned before its waiter arrived; the caller holds no permit. The waiter
        /// is not stored.
        case abandoned
    }

    /// What ``abandon(id:)`` did.
    enum Abandonment {
        /// The entry was still queued and is removed. Its waiter, if it had arrived, is returned to be
        /// resumed with a cancellation.
        case removed(Waiter?)
        /// The entry is not queued: it was handed a permit (its caller must release it) or it is
        /// unknown. Nothing changed.
        case notQueued
    }

    /// One queued caller.
    struct Entry {
        /// The waiter to resume, once ``attach(_:to:)`` stored it.
        var waiter: Waiter?
    }

    /// How many permits exist; at least 1.
    let limit: Int
    /// How many callers may wait at once; `nil` for no bound. Never negative.
    let maxQueued: Int?
    /// How many permits are taken (including those handed to entries whose waiter has not arrived).
    private(set) var running = 0
    /// The queued entries by id.
    private var entries: [ID: Entry] = [:]
    /// The ids in the order they were queued, from ``head`` on; ids no longer in ``entries`` (abandoned)
    /// are skipped lazily and dropped by ``compactIfSparse()``.
    private var order: [ID] = []
    /// The index in ``order`` of the oldest id that may still be queued.
    private var head = 0
    /// Entries handed a permit before their waiter arrived. At most `limit` of them.
    private var grantedBeforeAttach: Set<ID> = []

    /// Creates the state with every permit free.
    ///
    /// - Parameters:
    ///   - limit: How many permits exist; values below 1 count as 1.
    ///   - maxQueued: How many callers may wait at once; `nil` (the default) for no bound. Values below
    ///     0 count as 0: then a caller that finds no free permit is refused at once.
    init(limit: Int, maxQueued: Int? = nil) {
        self.limit = max(1, limit)
        self.maxQueued = maxQueued.map { max(0, $0) }
    }

    /// How many callers are queued (whether or not their waiter has arrived).
    var queuedCount: Int { entries.count }

    /// How many ids the queue stores, abandoned ones included (for the tests of its memory bound).
    var storedIDCount: Int { order.count }

    /// A caller arrives: it takes a free permit, queues behind every earlier caller, or (when the queue
    /// is full) is refused.
    ///
    /// A permit is taken at once only when nobody is queued, so a newcomer never overtakes a waiter.
    ///
    /// - Parameter id: The caller's id, never used before.
    /// - Returns: Whether the caller holds a permit now, is queued, or was refused.
    mutating func acquire(id: ID) -> Acquisition {
        if running < limit && entries.isEmpty {
            running += 1
            return .granted
        }
        if let maxQueued, entries.count >= maxQueued {
            return .refused
        }
        entries[id] = Entry()
        order.append(id)
        return .queued
    }

    /// Stores the waiter of a caller that ``acquire(id:)`` queued.
    ///
    /// - Parameters:
    ///   - waiter: What to resume when the entry is handed a permit or abandoned.
    ///   - id: The id the caller was queued with.
    /// - Returns: Whether the waiter is stored, or what happened to the entry before it arrived.
    mutating func attach(_ waiter: Waiter, to id: ID) -> Attachment {
        if entries[id] != nil {
            entries[id] = Entry(waiter: waiter)
            return .waiting
        }
        if grantedBeforeAttach.remove(id) != nil {
            return .granted
        }
        return .abandoned
    }

    /// A caller holding a permit gives it back: the oldest queued entry gets it, or it becomes free.
    ///
    /// - Returns: The waiter to resume with the permit; `nil` when the permit became free or went to an
    ///   entry whose waiter has not arrived (``attach(_:to:)`` tells it).
    mutating func release() -> Waiter? {
        precondition(running > 0, "ConcurrencyLimit released more permits than it granted")
        while head < order.count {
            let id = order[head]
            head += 1
            guard let entry = entries.removeValue(forKey: id) else { continue }  // abandoned earlier
            compactIfSparse()
            // The permit goes on to this entry: `running` stays the same.
            guard let waiter = entry.waiter else {
                grantedBeforeAttach.insert(id)
                return nil
            }
            return waiter
        }
        compactIfSparse()
        running -= 1
        return nil
    }

    /// A caller leaves the queue (its task was cancelled).
    ///
    /// - Parameter id: The id the caller was queued with.
    /// - Returns: ``Abandonment/removed(_:)`` with the waiter to resume with a cancellation when the
    ///   entry was still queued, or ``Abandonment/notQueued`` when it was already handed a permit (which
    ///   its caller must release) or is unknown.
    mutating func abandon(id: ID) -> Abandonment {
        guard let entry = entries.removeValue(forKey: id) else { return .notQueued }
        compactIfSparse()
        return .removed(entry.waiter)
    }

    /// Drops the ids of ``order`` that are no longer queued (handed on, before ``head``, or abandoned)
    /// once they outnumber the queued ones, so the queue's storage stays proportional to the callers
    /// actually waiting. A compaction copies the queued ids, fewer than twice the ids that left the
    /// queue since the previous compaction, so the cost is amortised O(1) per event.
    private mutating func compactIfSparse() {
        if entries.isEmpty {
            order.removeAll(keepingCapacity: order.capacity <= 64)
            head = 0
            return
        }
        guard order.count > 2 * entries.count + 16 else { return }
        order = order[head...].filter { entries[$0] != nil }
        head = 0
    }
}

extension ConcurrencyLimitState: Sendable where Waiter: Sendable {}
extension ConcurrencyLimitState.Entry: Sendable where Waiter: Sendable {}
extension ConcurrencyLimitState.Abandonment: Sendable where Waiter: Sendable {}
extension ConcurrencyLimitState.Abandonment: Equatable where Waiter: Equatable {}
