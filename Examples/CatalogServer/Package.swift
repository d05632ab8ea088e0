// swift-tools-version: 6.0
import PackageDescription

// A catalogue service built on StoreFlowable: a Hummingbird server whose repository layer is a set of
// stores over an upstream HTTP API, cached in SQLite by default or in PostgreSQL shared by several
// instances, with metrics, logs and a graceful shutdown. A package of its own under Examples/, depending
// on the library and its integrations by path, so that the library keeps no dependencies. See
// Docs/ServerExample.md: `swift run --package-path Examples/CatalogServer catalog-server` starts it with
// no set-up; `Examples/CatalogServer/run` builds and tests it as CI does; `Examples/CatalogServer/loadtest`
// measures it under load and faults with wrk.

/// Settings every target shares: Swift 6 language mode with complete strict concurrency.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "CatalogServer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "StoreFlowable", path: "../.."),
        .package(path: "../../Integrations/AsyncHTTPClient"),
        .package(path: "../../Integrations/SQLite"),
        .package(path: "../../Integrations/Postgres"),
        .package(path: "../../Integrations/Metrics"),
        .package(path: "../../Integrations/Logging"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        // Already in the graph through Hummingbird; named for its lock (`NIOLockedValueBox`), the errors
        // of its HTTP parser and sockets, and the accepted sockets' options.
        .package(url: "https://github.com/apple/swift-nio", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.3.0"),
    ],
    targets: [
        // What the upstream and the service both speak: the product, its JSON, the page and batch bodies.
        .target(
            name: "CatalogModel",
            swiftSettings: strictSettings
        ),
        // The upstream API: products with configurable latency, error rate and an outage switch, and
        // counts of the requests it served.
        .target(
            name: "CatalogUpstream",
            dependencies: [
                "CatalogModel",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "catalog-upstream",
            dependencies: [
                "CatalogUpstream",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The service: the repository layer (stores over the upstream, cached in SQLite or PostgreSQL)
        // and its routes.
        .target(
            name: "CatalogService",
            dependencies: [
                "CatalogModel",
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableFoundation", package: "StoreFlowable"),
                .product(name: "StoreFlowableAsyncHTTPClient", package: "AsyncHTTPClient"),
                .product(name: "StoreFlowableSQLite", package: "SQLite"),
                .product(name: "StoreFlowablePostgres", package: "Postgres"),
                .product(name: "StoreFlowableMetrics", package: "Metrics"),
                .product(name: "StoreFlowableLogging", package: "Logging"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "catalog-server",
            dependencies: [
                "CatalogService",
                "CatalogUpstream",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CatalogServerTests",
            dependencies: [
                "CatalogModel", "CatalogUpstream", "CatalogService",
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableTesting", package: "StoreFlowable"),
                .product(name: "StoreFlowablePostgresTestServer", package: "Postgres"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
