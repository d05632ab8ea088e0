// swift-tools-version: 6.0
import PackageDescription

/// Settings every target shares: Swift 6 language mode with complete strict concurrency.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "StoreFlowable",
    platforms: [
        .macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9),
    ],
    products: [
        .library(name: "StoreFlowable", targets: ["StoreFlowable"]),
        .library(name: "StoreFlowableTesting", targets: ["StoreFlowableTesting"]),
        .library(name: "StoreFlowableFoundation", targets: ["StoreFlowableFoundation"]),
        .executable(name: "storeflowable-demo", targets: ["StoreFlowableDemo"]),
    ],
    targets: [
        .target(name: "StoreFlowable", swiftSettings: strictSettings),
        .target(
            name: "StoreFlowableTesting",
            dependencies: ["StoreFlowable"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "StoreFlowableDemo",
            dependencies: ["StoreFlowable", "StoreFlowableFoundation", "StoreFlowableTesting"],
            path: "Sources/storeflowable-demo",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StoreFlowableTests",
            dependencies: ["StoreFlowable", "StoreFlowableTesting"],
            swiftSettings: strictSettings
        ),
        // The disk cache, in a product of its own so that the core module imports no Foundation.
        .target(
            name: "StoreFlowableFoundation",
            dependencies: ["StoreFlowable"],
            swiftSettings: strictSettings
        ),
        // The child process that DiskCache's crash tests kill in the middle of writes; not a product.
        .executableTarget(
            name: "DiskCacheCrashWriter",
            dependencies: ["StoreFlowableFoundation"],
            path: "Sources/diskcache-crash-writer",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StoreFlowableFoundationTests",
            // The crash writer is a dependency so that `swift build --build-tests` and `swift test`
            // build its binary next to the test bundle.
            dependencies: ["StoreFlowableFoundation", "StoreFlowableTesting", "DiskCacheCrashWriter"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
