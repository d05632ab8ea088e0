#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PostgresCache {
    /// Releases the fetch claim of a ``PostgresSingleFlight`` that waits for this write of `keyBytes`,
    /// if any: the other instances waiting for the key then read the written row at their next check.
    ///
    /// Runs in a task of its own, so that a cancelled writer still releases the claim; a failure leaves
    /// the claim to expire after its short grace. No statement runs when no claim waits.
    ///
    /// - Parameter keyBytes: The encoded key just written.
    func releaseClaim(afterWriting keyBytes: Data) async {
        guard let token = claims.take(keyBytes) else { return }
        let database = database
        let claimTable = table.claimTable
        await Task {
            try? await database.execute(
                "release claim", "DELETE FROM \(unescaped: claimTable) WHERE key = \(keyBytes) AND holder = \(token)")
        }.value
    }
}
