import PostgresNIO
import StoreFlowable
import Testing

@testable import StoreFlowablePostgres

/// Review of early delivery: a cache statement's rows reach its caller from the connection's event
/// loop, before the statement's task gave the connection back to the pool.
@Suite(.timeLimit(.minutes(1)))
struct EarlyDeliveryReviewTests {
    /// A caller that goes on at once with another statement, on a pool of one: it waits for the
    /// connection the previous statement is still giving back, within its own timeout, and every
    /// statement succeeds; a direct user of the client too.
    @Test func theNextStatementOnAPoolOfOneWaitsForTheConnection() async throws {
        try await withPoolOfOne { client in
            let patient = try await makeCache(client, timeout: .seconds(30))
            let cache = try await openWithShortTimeout(client, name: patient.name, timeout: .seconds(5))
            let storedAt = CacheTime(nanosecondsSince1970: 1)
            for round in 0..<200 {
                try await cache.setEntry(CacheEntry(value: "v\(round)", storedAt: storedAt), forKey: 1)
                #expect(try await cache.entry(forKey: 1)?.value == "v\(round)")
                #expect(try await scalar(client, "SELECT \(Int64(round))::int8") == Int64(round))
            }
        }
    }

    /// A write whose rows reached its caller is visible to the caller's next read, even on another
    /// connection of the pool.
    @Test func aWriteIsVisibleToTheNextReadOnAnyConnection() async throws {
        var configuration = try await sharedServer().configuration()
        configuration.options.maximumConnections = 4
        let client = PostgresClient(configuration: configuration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let cache = try await makeCache(client)
            let storedAt = CacheTime(nanosecondsSince1970: 1)
            for round in 0..<300 {
                try await cache.setEntry(CacheEntry(value: "v\(round)", storedAt: storedAt), forKey: 1)
                #expect(try await cache.entry(forKey: 1)?.value == "v\(round)")
            }
        }
    }
}
