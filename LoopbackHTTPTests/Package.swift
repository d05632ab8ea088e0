// swift-tools-version: 6.0
import PackageDescription

// The loaders of StoreFlowable against a real HTTP server on loopback: a Hummingbird server that the
// tests start and stop themselves, reached through URLSession and through AsyncHTTPClient. A package of
// its own, so that the library keeps no dependencies: `LoopbackHTTPTests/run` builds and runs it (CI
// does), and `swift test --package-path LoopbackHTTPTests` does too.
let package = Package(
    name: "LoopbackHTTPTests",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    dependencies: [
        .package(name: "StoreFlowable", path: ".."),
        // `AsyncHTTPClientTransport`, the integration these tests run every network case through.
        .package(name: "StoreFlowableAsyncHTTPClient", path: "../Integrations/AsyncHTTPClient"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        // The server's graceful stop; Hummingbird depends on it (by this URL) already.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
    ],
    targets: [
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
                "LoopbackServer",
                .product(name: "StoreFlowableAsyncHTTPClient", package: "StoreFlowableAsyncHTTPClient"),
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableFoundation", package: "StoreFlowable"),
                .product(name: "StoreFlowableTesting", package: "StoreFlowable"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
