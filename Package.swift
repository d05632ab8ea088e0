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
            dependencies: ["StoreFlowable"],
            path: "Sources/storeflowable-demo",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StoreFlowableTests",
            dependencies: ["StoreFlowable", "StoreFlowableTesting"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
