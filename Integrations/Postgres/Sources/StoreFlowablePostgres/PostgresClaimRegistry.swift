import StoreFlowable
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What this process knows of a cache's fetch claims, by encoded key:
/// - the claims a ``PostgresSingleFlight`` holds whose origin call returned: the cache's next write of
///   that key releases it (the write is what the other instances are waiting for);
/// - the row each key had when this process last read it as a miss or not fresh: a fetch that follows
///   such a read and finds the row rewritten since uses the new value instead of calling the origin
///   (another instance wrote it between this process's read and its claim).
///
/// Empty unless a single flight is used, so a cache without one pays one uncontended lock per write
/// and one atomic load per read; with one, a read also takes one uncontended lock (and a second for a
/// miss or a value that is not fresh).
final class PostgresClaimRegistry: Sendable {
    /// The row a read found, for the fetch that follows it.
    struct ReadRow: Sendable {
        /// The row's `seq`, `nil` for no row.
        var seq: Int64?
        /// When it was read, on the cache's clock.
        var readAt: CacheTime
    }

    /// The most reads remembered; past it they are all forgotten (a read whose fetch then finds a
    /// rewritten row calls the origin, as without the record).
    static let readLimit = 4096

    /// The number of stripes of ``State/writes``.
    private static let writeStripes = 64

    private struct State {
        var tokens: [Data: String] = [:]
        var reads: [Data: ReadRow] = [:]
        /// How many times this cache object wrote a key of each stripe (by the key's hash): a read that
        /// a write of its stripe overlapped is not remembered, since it may have found the row before
        /// this object's own write and be remembered after it.
        var writes = [UInt64](repeating: 0, count: PostgresClaimRegistry.writeStripes)
    }

    private let state = Mutex(State())
    /// Whether a single flight uses the cache, so that reads are worth remembering.
    private let tracksReads = Atomic<Bool>(false)
    /// How many reads are remembered, so that a read of a fresh value forgets nothing without a lock
    /// when there is nothing to forget.
    private let readCount = Atomic<Int>(0)

    /// Records that the claim `token` on `keyBytes` waits for the key's next write.
    func hold(_ keyBytes: Data, token: String) {
        state.withLock { $0.tokens[keyBytes] = token }
    }

    /// Takes the claim waiting for a write of `keyBytes`, if any, when this process wrote the key; it
    /// also forgets the key's last read (a read before this process's own write tells a later fetch
    /// nothing: that fetch must not take this write for another instance's).
    ///
    /// - Returns: The claim's token, now forgotten by the registry.
    func take(_ keyBytes: Data) -> String? {
        state.withLock { state in
            state.writes[Self.stripe(of: keyBytes)] &+= 1
            if state.reads.removeValue(forKey: keyBytes) != nil {
                readCount.store(state.reads.count, ordering: .relaxed)
            }
            return state.tokens.removeValue(forKey: keyBytes)
        }
    }

    /// Forgets the claim `token` on `keyBytes` if it is still recorded (another claim of the key may
    /// have replaced it).
    func forget(_ keyBytes: Data, token: String) {
        state.withLock { state in
            if state.tokens[keyBytes] == token { state.tokens[keyBytes] = nil }
        }
    }

    /// Makes ``noteRead(_:seq:at:writesBefore:)`` remember reads from now on; called by each single
    /// flight of the cache.
    func startTrackingReads() {
        tracksReads.store(true, ordering: .relaxed)
    }

    /// Whether reads are remembered: `false` until a single flight uses the cache.
    var isTrackingReads: Bool { tracksReads.load(ordering: .relaxed) }

    /// How many times this cache object wrote keys of the stripe of `keyBytes`: taken before a read's
    /// statement and passed to ``noteRead(_:seq:at:writesBefore:)`` after it.
    func writes(of keyBytes: Data) -> UInt64 {
        state.withLock { $0.writes[Self.stripe(of: keyBytes)] }
    }

    /// Remembers that `keyBytes` was read as a miss or not fresh, its row then being `seq`, unless this
    /// cache object wrote a key of its stripe since `writesBefore` (see ``writes(of:)``) was taken: the
    /// read may then have found the row before this object's own write.
    func noteRead(_ keyBytes: Data, seq: Int64?, at time: CacheTime, writesBefore: UInt64) {
        state.withLock { state in
            guard state.writes[Self.stripe(of: keyBytes)] == writesBefore else { return }
            if state.reads.count >= Self.readLimit, state.reads[keyBytes] == nil { state.reads.removeAll() }
            state.reads[keyBytes] = ReadRow(seq: seq, readAt: time)
            readCount.store(state.reads.count, ordering: .relaxed)
        }
    }

    /// Forgets the last read of `keyBytes` as a miss or not fresh: a read found its value fresh since,
    /// so a fetch that follows is not one of a miss (a `refresh()` after a hit calls the origin).
    func forgetRead(_ keyBytes: Data) {
        guard readCount.load(ordering: .relaxed) > 0 else { return }
        state.withLock { state in
            if state.reads.removeValue(forKey: keyBytes) != nil {
                readCount.store(state.reads.count, ordering: .relaxed)
            }
        }
    }

    /// Takes the row last read of `keyBytes` as a miss or not fresh, if any.
    ///
    /// - Returns: The read, now forgotten by the registry.
    func takeRead(_ keyBytes: Data) -> ReadRow? {
        state.withLock { state in
            let read = state.reads.removeValue(forKey: keyBytes)
            if read != nil { readCount.store(state.reads.count, ordering: .relaxed) }
            return read
        }
    }

    private static func stripe(of keyBytes: Data) -> Int {
        keyBytes.hashValue & (writeStripes - 1)
    }
}
