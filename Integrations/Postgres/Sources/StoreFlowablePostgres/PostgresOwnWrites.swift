import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The latest write of each key by which one cache object changed its row (a value, format or mark the
/// row did not hold), with the row's `seq`: what ``PostgresCache/listenForChanges(reloading:retry:clock:)``
/// compares another cache object's change with.
///
/// A key's row's `seq` grows in the order its writes commit (see ``PostgresCache/setEntry(_:forKey:)``).
/// So when another object's change of a key arrives with a `seq` below this object's own latest write
/// of that key, this object's write committed after the change, yet its store began the fetch (or
/// the update) that it wrote before it heard of the change: the value may be older than the change,
/// and must not stay fresh.
///
/// Writes that changed nothing in the row (the row already held the same value, format and mark: the
/// upsert only refreshed `stored_at`, and notified nobody) are not recorded: the row then already held
/// that value, as written by a write that is checked on its own. Counting them would let two instances
/// that both refetched one value after an invalidation mark each other's write stale in turn.
///
/// Nothing is recorded until ``startTracking()`` (called by the reloading listener): a cache object
/// without one pays one atomic load per write. The record is bounded: it holds at most ``limit``
/// writes, and forgets the oldest past that. It matters only until the other objects' changes
/// committed before a write have been heard, which is a notification's delay; a key whose write was
/// forgotten earlier (over ``limit`` later writes by this object within that delay) is not checked.
///
/// Writes are known by their encoded keys, so that the lock, held only to read or change the record,
/// runs no code of the caller's (a key's `hash(into:)`, a coder), and never spans an `await`.
final class PostgresOwnWrites: Sendable {
    /// One recorded write.
    struct Write: Sendable {
        /// The `seq` the write gave the key's row.
        var seq: Int64
        /// The FNV-1a hash of the encoded key, for a key long enough that a notification may carry its
        /// hash instead of the key (see ``PostgresCacheNotification/prefix(instanceID:operation:target:)``);
        /// `nil` for a shorter key.
        var keyHash: UInt64?
    }

    /// The most writes remembered; past it, the oldest recorded is forgotten.
    static let limit = 4096

    /// The record, under ``state``'s lock.
    private struct State {
        /// The latest recorded write of each encoded key.
        var latest: [Data: Write] = [:]
        /// The writes in the order they were recorded, a ring of at most ``PostgresOwnWrites/limit``:
        /// once it is full, `next` is the oldest, which the next record replaces (and forgets, unless
        /// its key was written again since).
        var ring: [(key: Data, seq: Int64)] = []
        /// The ring's oldest entry once it is full, where the next record goes.
        var next = 0
    }

    private let state = Mutex(State())
    /// Whether writes are recorded: `false` until ``startTracking()``.
    private let tracking = Atomic<Bool>(false)

    /// Records writes from now on.
    func startTracking() {
        tracking.store(true, ordering: .relaxed)
    }

    /// Whether writes are recorded.
    var isTracking: Bool { tracking.load(ordering: .relaxed) }

    /// Records that this cache object's write of `keyBytes` changed its row, giving it `seq`; does
    /// nothing until ``startTracking()``, or when a later write of the key by this object is already
    /// recorded (two of its writes of one key ran at once).
    ///
    /// - Parameters:
    ///   - keyBytes: The encoded key written; its hash is kept for a long key.
    ///   - seq: The row's `seq` after the write.
    func record(_ keyBytes: Data, seq: Int64) {
        guard isTracking else { return }
        let keyHash = Self.mayBeNotifiedByHash(keyBytes) ? PostgresCacheNotification.fnv1a(keyBytes) : nil
        state.withLock { state in
            if let known = state.latest[keyBytes], known.seq >= seq { return }
            state.latest[keyBytes] = Write(seq: seq, keyHash: keyHash)
            guard state.ring.count == Self.limit else {
                state.ring.append((keyBytes, seq))
                return
            }
            let oldest = state.ring[state.next]
            if state.latest[oldest.key]?.seq == oldest.seq { state.latest[oldest.key] = nil }
            state.ring[state.next] = (keyBytes, seq)
            state.next = (state.next + 1) % Self.limit
        }
    }

    /// Takes the record of `keyBytes` when this object's latest recorded write of it has a `seq` above
    /// `version`: it committed after the change numbered `version`.
    ///
    /// - Parameters:
    ///   - keyBytes: The encoded key that another cache object changed.
    ///   - version: The change's `seq` (see ``PostgresCacheChange``).
    /// - Returns: Whether the write was newer; it is then forgotten, so that it is marked once.
    func takeWrite(of keyBytes: Data, newerThan version: Int64) -> Bool {
        guard isTracking else { return false }
        return state.withLock { state in
            guard let write = state.latest[keyBytes], write.seq > version else { return false }
            state.latest[keyBytes] = nil
            return true
        }
    }

    /// Takes the records of the keys with the hash `keyHash` whose latest recorded write has a `seq`
    /// above `version` (see ``takeWrite(of:newerThan:)``).
    ///
    /// - Parameters:
    ///   - keyHash: The hash of the key another cache object changed.
    ///   - version: The change's `seq`.
    /// - Returns: The encoded keys, now forgotten; usually none, or the one key of that hash.
    func takeWrites(withHash keyHash: UInt64, newerThan version: Int64) -> [Data] {
        guard isTracking else { return [] }
        return state.withLock { state in
            let keys = state.latest.compactMap { key, write in
                write.keyHash == keyHash && write.seq > version ? key : nil
            }
            for key in keys { state.latest[key] = nil }
            return keys
        }
    }

    /// Whether a notification of a change of `keyBytes` may carry the key's hash rather than the key:
    /// `true` for every key whose payload may pass ``PostgresCacheNotification/maximumLength`` (a
    /// payload's other fields take at most 103 bytes; 128 leaves room), and for a few shorter ones.
    ///
    /// - Parameter keyBytes: An encoded key.
    /// - Returns: Whether to keep the key's hash.
    static func mayBeNotifiedByHash(_ keyBytes: Data) -> Bool {
        (keyBytes.count + 2) / 3 * 4 + 128 > PostgresCacheNotification.maximumLength
    }
}
