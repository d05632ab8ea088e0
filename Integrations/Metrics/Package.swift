// swift-tools-version: 6.0
import PackageDescription

// StoreFlowable's store events forwarded to swift-metrics: `MetricsEventObserver`. A package of its own,
// depending on the repository by path, so that the library keeps no dependencies and a user of the
// logging integration never resolves swift-metrics. `Integrations/Metrics/run` builds and tests it (CI
// does); see Docs/Observability.md.

/// Settings every target shares: Swift 6 language mode with complete strict concurrency.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "StoreFlowableMetrics",
    platforms: [
        .macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9),
    ],
    products: [
        .library(name: "StoreFlowableMetrics", targets: ["StoreFlowableMetrics"])
    ],
    dependencies: [
        .package(name: "StoreFlowable", path: "../.."),
        // The observer calls the factory's handlers directly (no `Counter(label:dimensions:factory:)`,
        // which came later), so 2.4.0 is enough.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
    ],
    targets: [
        .target(
            name: "StoreFlowableMetrics",
            dependencies: [
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StoreFlowableMetricsTests",
            dependencies: [
                "StoreFlowableMetrics",
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableTesting", package: "StoreFlowable"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
