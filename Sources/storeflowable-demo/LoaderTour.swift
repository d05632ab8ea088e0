import Foundation
import Observation
import StoreFlowable
import StoreFlowableFoundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The loaders part: `SimpleNetworkLoader` over the demo's in-process HTTP API, a `KeyedStore` in front
/// of it, and `Loader`s over the store: a hundred loaders share one request, a refresh keeps the value
/// shown, a 404 is a typed error, a new key supersedes the last load, and cancel is never an error.
@MainActor
func showLoaders(_ checks: inout Checks) async {
    let origin = DemoOrigin(latency: .milliseconds(20))
    let api = SimpleNetworkLoader<Int, User>(transport: DemoTransport(origin: origin)) { id in
        guard let url = URL(string: "https://api.example.com/users/\(id)") else { throw URLError(.badURL) }
        return URLRequest(url: url)
    }
    let users = KeyedStore(cache: MemoryCache<Int, User>(policy: DemoRepository.policy), fetch: api.fetch)

    print("100 × Loader(users).load(key: 1)")
    let loaders = (0..<100).map { _ in Loader(users) }
    for loader in loaders { loader.load(key: 1) }
    for loader in loaders { await settled(loader) }
    let shown = Set(loaders.compactMap { $0.object?.description })
    var calls = await origin.callCount
    print("→ every loader shows \(shown.sorted().joined(separator: ", ")); requests: \(calls)")
    checks.expect(shown == ["Ada rev 1"], "every loader should show Ada rev 1, not \(shown)")
    checks.expect(calls == 1, "100 loaders of one key should make 1 request, not \(calls)")

    let loader = loaders[0]
    print("loader.refresh(key: 1)")
    loader.refresh(key: 1)
    let during = loader.object?.description ?? "nothing"
    print("→ while it runs: isLoading \(loader.isLoading), still showing \(during)")
    checks.expect(loader.isLoading && during == "Ada rev 1", "a refresh should keep Ada rev 1 shown")
    await settled(loader)
    print("→ then \(describe(loader.object))")
    checks.expect(loader.object?.revision == 2, "the refresh should bring revision 2")

    print("loader.load(key: 99)   // the API answers 404")
    loader.load(key: 99)
    await settled(loader)
    print("→ error: \(describe(loader.error))")
    var isNotFound = false
    if case NetworkLoaderError.unacceptableStatus(404, _, _)? = loader.error { isNotFound = true }
    checks.expect(isNotFound, "a 404 should be NetworkLoaderError.unacceptableStatus(404)")

    print("loader.load(key: 2); loader.load(key: 3)   // the second supersedes the first")
    loader.load(key: 2)
    loader.load(key: 3)
    await settled(loader)
    print("→ \(describe(loader.object))")
    checks.expect(loader.object?.id == 3 && loader.key == 3, "only user 3 should be shown")

    print("loader.load(key: 4); loader.cancel()")
    loader.load(key: 4)
    loader.cancel()
    print("→ isLoading \(loader.isLoading), error \(describe(loader.error))")
    checks.expect(!loader.isLoading && loader.error == nil, "cancel should stop loading without an error")
    calls = await origin.callCount
    print("requests in all: \(calls)")
}

/// Waits until `loader` is not loading, watching it with Observation (no polling).
@MainActor
private func settled<Key, Value>(_ loader: Loader<Key, Value>) async {
    while loader.isLoading {
        await withCheckedContinuation { continuation in
            withObservationTracking {
                _ = loader.isLoading
            } onChange: {
                continuation.resume()
            }
        }
    }
}
