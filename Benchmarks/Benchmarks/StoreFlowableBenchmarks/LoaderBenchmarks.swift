import Benchmark
import Foundation
import Observation
import StoreFlowable
import StoreFlowableFoundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `Loader` showing a fresh cached value, next to the `publish()` stream it observes; and a
/// `SimpleNetworkLoader` fetch (status check and JSON decoding, the transport answering from memory),
/// next to decoding the same body with `JSONDecoder` alone.
func loaderBenchmarks() {
    let config = configuration(maxDuration: .seconds(1), mallocTolerance: 4)
    // A loader's allocations depend on how many main-actor hops and Observation rounds a load takes,
    // which the scheduler decides: 86 to 91 were seen for the same code (p90).
    let loaderConfig = configuration(maxDuration: .seconds(1), mallocRelativeTolerance: 10)
    let cache = MemoryCache<Int, User>(policy: FreshnessPolicy(freshFor: .seconds(3_600)))
    cache[42] = User(id: 42)
    let origin = CountingOrigin()
    let users = KeyedStore(cache: cache) { id in try await origin.fetchUser(id: id) }

    // What the loader is built on: a stream of the key, consumed on the main actor (as the loader's
    // task does) until its first `.completed`.
    Benchmark("Loader.baseline.publishFirstCompletedOnMainActor", configuration: loaderConfig) { _ in
        await firstCompletedOnMainActor(users)
    }

    // A new loader, `load(key:)`, and the wait (by Observation) until it shows the value.
    Benchmark("Loader.loadFresh", configuration: loaderConfig) { benchmark in
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
        await loadOnce(users)
        if origin.callCount != 0 { benchmark.error("a fresh value was fetched") }
    }

    let body = Data(#"{"id":42,"name":"Ada","version":3}"#.utf8)
    Benchmark("Network.baseline.jsonDecode", configuration: config) { _ in
        blackHole(try JSONDecoder().decode(WireUser.self, from: body))
    }

    let api = SimpleNetworkLoader<Int, WireUser>(transport: MemoryTransport(body: body)) { id in
        guard let url = URL(string: "http://127.0.0.1/users/\(id)") else { throw URLError(.badURL) }
        return URLRequest(url: url)
    }
    Benchmark("Network.fetchDecoded", configuration: config) { _ in
        blackHole(try await api.fetch(42))
    }
}

/// Consumes the stream of user 42 on the main actor until its first `.completed`.
@MainActor
private func firstCompletedOnMainActor<Cache: KeyedCache<Int, User>>(_ users: KeyedStore<Cache>) async {
    let stream = users[42].publish()
    let consumer = Task { @MainActor in
        for await state in stream {
            if case .completed = state {
                blackHole(state)
                break
            }
        }
    }
    await consumer.value
}

/// Makes a loader over `users`, loads user 42 and waits until it shows it.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
private func loadOnce<Cache: KeyedCache<Int, User>>(_ users: KeyedStore<Cache>) async {
    let loader = Loader(users)
    loader.load(key: 42)
    while loader.object == nil {
        await withCheckedContinuation { continuation in
            withObservationTracking {
                _ = loader.object
            } onChange: {
                continuation.resume()
            }
        }
    }
    blackHole(loader.object)
}

/// The user as a JSON API sends it.
private struct WireUser: Codable, Sendable {
    let id: Int
    let name: String
    let version: Int
}

/// A transport that answers every request with a 200 and `body`, from memory.
private struct MemoryTransport: HTTPTransport {
    let body: Data

    func send(_ request: URLRequest, maxBodySize: Int) async throws -> HTTPResponse {
        HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: body)
    }
}
