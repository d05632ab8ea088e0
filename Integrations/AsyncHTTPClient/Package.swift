// swift-tools-version: 6.0
import PackageDescription

// StoreFlowable's loaders over AsyncHTTPClient: `AsyncHTTPClientTransport`, an `HTTPTransport` for
// `SimpleNetworkLoader`. A package of its own, depending on the repository by path, so that the library
// keeps no dependencies and a user of another integration never resolves AsyncHTTPClient. Its tests run
// against a real server on loopback in `LoopbackHTTPTests` (which depends on it by path); see
// Docs/Loaders.md.
let package = Package(
    name: "StoreFlowableAsyncHTTPClient",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "StoreFlowableAsyncHTTPClient", targets: ["StoreFlowableAsyncHTTPClient"])
    ],
    dependencies: [
        .package(name: "StoreFlowable", path: "../.."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .target(
            name: "StoreFlowableAsyncHTTPClient",
            dependencies: [
                .product(name: "StoreFlowableFoundation", package: "StoreFlowable"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
