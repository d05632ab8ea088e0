import PostgresNIO

extension PostgresClient {
    /// Runs `query` and reads its rows to the end, discarding them.
    ///
    /// Reading to the end returns the connection to the pool at once and surfaces an error the server
    /// sends after the first rows.
    ///
    /// - Parameter query: A statement whose rows are not needed.
    /// - Throws: What postgres-nio throws.
    func execute(_ query: PostgresQuery) async throws {
        for try await _ in try await self.query(query) {}
    }
}
