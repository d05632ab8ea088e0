// swift-tools-version: 6.0
import PackageDescription

// The loaders of StoreFlowable against a real HTTP server on loopback: a Hummingbird server that the
// tests start and stop themselves, reached through URLSession and through AsyncHTTPClient. A package of
// its own, so that the library keeps no dependencies: `LoopbackHTTPTests/run` builds and runs it (CI
// does), and `swift test --package-path LoopbackHTTPTests` does too.
let package = Package(
    name: "LoopbackHTTPTests",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "AsyncHTTPClientTransport", targets: ["AsyncHTTPClientTransport"])
    ],
    dependencies: [
        .package(name: "StoreFlowable", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // The server's graceful stop; Hummingbird depends on it (by this URL) already.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
    ],
    targets: [
        // An `HTTPTransport` over AsyncHTTPClient: the adapter Docs/Loaders.md shows.
        .target(
            name: "AsyncHTTPClientTransport",
            dependencies: [
                .product(name: "StoreFlowableFoundation", package: "StoreFlowable"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The HTTP server the tests talk to.
        .target(
            name: "LoopbackServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "LoopbackHTTPTests",
            dependencies: [
                "AsyncHTTPClientTransport", "LoopbackServer",
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableFoundation", package: "StoreFlowable"),
                .product(name: "StoreFlowableTesting", package: "StoreFlowable"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
