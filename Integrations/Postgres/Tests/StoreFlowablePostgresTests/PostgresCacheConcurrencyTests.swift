import StoreFlowable
import StoreFlowablePostgres
import Testing

/// Concurrent writers and readers of one key, on several clients (connections) at once: every read
/// sees nothing or one complete value, and the key ends with one complete value.
@Suite(.timeLimit(.minutes(2)))
struct PostgresCacheConcurrencyTests {
    @Test func concurrentWritersAndReadersOfOneKeyEndWithOneCompleteValue() async throws {
        let name = uniqueName()
        // Each writer's value is long and made of its own number, so that a mix of two would show.
        let values = (0..<16).map { writer in "writer \(writer): " + String(repeating: "\(writer % 10)", count: 20_000)
        }
        let storedAt = (0..<16).map { CacheTime(nanosecondsSince1970: 1_000 + Int64($0)) }
        let valid = Set(values)
        try await withClient { client in
            try await PostgresCacheSchema.migrate(name: name, client: client)
        }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<16 {
                group.addTask {
                    try await withClient { client in
                        let cache = try await PostgresCache<Int, String>(name: name, client: client)
                        for _ in 0..<10 {
                            try await cache.setEntry(
                                CacheEntry(value: values[writer], storedAt: storedAt[writer]), forKey: 1)
                        }
                        return 0
                    }
                }
            }
            for _ in 0..<8 {
                group.addTask {
                    try await withClient { client in
                        let cache = try await PostgresCache<Int, String>(name: name, client: client)
                        var torn = 0
                        for _ in 0..<20 {
                            if let entry = try await cache.entry(forKey: 1) {
                                let writer = values.firstIndex(of: entry.value)
                                if writer == nil || entry.storedAt != storedAt[writer ?? 0] { torn += 1 }
                            }
                        }
                        return torn
                    }
                }
            }
            var torn = 0
            for try await count in group { torn += count }
            #expect(torn == 0)
        }
        try await withClient { client in
            let cache = try await PostgresCache<Int, String>(name: name, client: client)
            let entry = try #require(try await cache.entry(forKey: 1))
            #expect(valid.contains(entry.value))
            let writer = try #require(values.firstIndex(of: entry.value))
            #expect(entry.storedAt == storedAt[writer])
            let rows = try await rowCount(client, cache)
            #expect(rows == 1)
        }
    }
}
