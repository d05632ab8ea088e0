import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The fetch claims this process holds on a cache's keys, by encoded key: a ``PostgresSingleFlight``
/// records one when its origin call returned, and the cache's next write of that key releases it (the
/// write is what the other instances are waiting for).
///
/// Empty unless a single flight is used, so a cache without one pays one uncontended lock per write.
final class PostgresClaimRegistry: Sendable {
    private let tokens = Mutex<[Data: String]>([:])

    /// Records that the claim `token` on `keyBytes` waits for the key's next write.
    func hold(_ keyBytes: Data, token: String) {
        tokens.withLock { $0[keyBytes] = token }
    }

    /// Takes the claim waiting for a write of `keyBytes`, if any.
    ///
    /// - Returns: The claim's token, now forgotten by the registry.
    func take(_ keyBytes: Data) -> String? {
        tokens.withLock { $0.removeValue(forKey: keyBytes) }
    }

    /// Forgets the claim `token` on `keyBytes` if it is still recorded (another claim of the key may
    /// have replaced it).
    func forget(_ keyBytes: Data, token: String) {
        tokens.withLock { tokens in
            if tokens[keyBytes] == token { tokens[keyBytes] = nil }
        }
    }
}
