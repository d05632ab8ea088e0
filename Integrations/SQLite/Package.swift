// swift-tools-version: 6.1
import PackageDescription

// A StoreFlowable cache in an SQLite database file: `SQLiteCache`, over vapor/sqlite-nio (which bundles
// SQLite). A package of its own, depending on the repository by path, so that the library keeps no
// dependencies and a user of the PostgreSQL cache never resolves SQLite. `Integrations/SQLite/run`
// builds and tests it (CI does); see Docs/ServerCaches.md. (Tools 6.1: sqlite-nio needs it.)

/// Settings every target shares: Swift 6 language mode with complete strict concurrency.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "StoreFlowableSQLite",
    platforms: [
        // Synchronization's Mutex (the lock of the cache's open and close) needs macOS 15,
        // iOS 18, tvOS 18 or watchOS 11.
        .macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11),
    ],
    products: [
        .library(name: "StoreFlowableSQLite", targets: ["StoreFlowableSQLite"])
    ],
    dependencies: [
        .package(name: "StoreFlowable", path: "../.."),
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.0"),
    ],
    targets: [
        .target(
            name: "StoreFlowableSQLite",
            dependencies: [
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableFoundation", package: "StoreFlowable"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // A process of its own that writes to a cache until it is killed, for the crash tests.
        .executableTarget(
            name: "sqlite-cache-writer",
            dependencies: [
                "StoreFlowableSQLite",
                .product(name: "StoreFlowable", package: "StoreFlowable"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StoreFlowableSQLiteTests",
            dependencies: [
                "StoreFlowableSQLite",
                "sqlite-cache-writer",
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableFoundation", package: "StoreFlowable"),
                .product(name: "StoreFlowableTesting", package: "StoreFlowable"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
