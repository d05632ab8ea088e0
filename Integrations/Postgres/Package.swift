// swift-tools-version: 6.0
import PackageDescription

// StoreFlowable's keyed cache in a PostgreSQL table: `PostgresCache`. A package of its own, depending on
// the repository by path, so that the library keeps no dependencies and a user of the other caches never
// resolves postgres-nio. `Integrations/Postgres/run` builds it and tests it against a real PostgreSQL
// server that the tests start themselves (see README.md beside this file).

/// Settings every target shares: Swift 6 language mode with complete strict concurrency.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "StoreFlowablePostgres",
    platforms: [
        // Synchronization's Mutex and Atomic (the locks of the cache and its single flight) need macOS 15,
        // iOS 18, tvOS 18 or watchOS 11.
        .macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11),
    ],
    products: [
        .library(name: "StoreFlowablePostgres", targets: ["StoreFlowablePostgres"]),
        // A throwaway PostgreSQL server (initdb and pg_ctl) for the tests and the benchmarks (Benchmarks/).
        .library(name: "StoreFlowablePostgresTestServer", targets: ["StoreFlowablePostgresTestServer"]),
    ],
    dependencies: [
        .package(name: "StoreFlowable", path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        // Already in the graph through postgres-nio; named for the tests' event loop with a clock of its
        // own (`NIOAsyncTestingEventLoop`), on which the deadlines' watchdog is tested.
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
    ],
    targets: [
        .target(
            name: "StoreFlowablePostgres",
            dependencies: [
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableFoundation", package: "StoreFlowable"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // A server instance in a process of its own, driven by line commands, for the multi-process
        // tests (Tests/StoreFlowablePostgresTests/MultiInstanceTests.swift).
        .executableTarget(
            name: "postgres-cache-instance",
            dependencies: [
                "StoreFlowablePostgres",
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StoreFlowablePostgresTests",
            dependencies: [
                "StoreFlowablePostgres",
                // Built with the tests (`swift build --build-tests`), next to the test binary.
                "postgres-cache-instance",
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableFoundation", package: "StoreFlowable"),
                .product(name: "StoreFlowableTesting", package: "StoreFlowable"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                "StoreFlowablePostgresTestServer",
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "StoreFlowablePostgresTestServer",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio")
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
