// swift-tools-version: 6.0
import PackageDescription

// StoreFlowable's store events written to swift-log: `LoggingEventObserver`. A package of its own,
// depending on the repository by path, so that the library keeps no dependencies and a user of the
// metrics integration never resolves swift-log. `Integrations/Logging/run` builds and tests it (CI
// does); see Docs/Observability.md.

/// Settings every target shares: Swift 6 language mode with complete strict concurrency.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "StoreFlowableLogging",
    platforms: [
        .macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9),
    ],
    products: [
        .library(name: "StoreFlowableLogging", targets: ["StoreFlowableLogging"])
    ],
    dependencies: [
        .package(name: "StoreFlowable", path: "../.."),
        // The observer needs 1.5.0. The tests' log handler implements `log(event:)`, which newer releases
        // ask handlers for (the older method is deprecated there), so the tests need one of those; SwiftPM
        // resolves the newest.
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "StoreFlowableLogging",
            dependencies: [
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StoreFlowableLoggingTests",
            dependencies: [
                "StoreFlowableLogging",
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableTesting", package: "StoreFlowable"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
