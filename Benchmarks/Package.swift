// swift-tools-version: 6.1
import PackageDescription

// The benchmarks of StoreFlowable, kept in a package of their own (as swift-nio and swift-log keep
// theirs) so that the library itself has no dependencies. Run from the repository root:
//
//     swift package --package-path Benchmarks benchmark
//     Benchmarks/ratios        # each benchmark next to its baseline, with the ratio and its target
//
// See Docs/Performance.md.
let package = Package(
    name: "StoreFlowableBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "StoreFlowable", path: ".."),
        .package(name: "StoreFlowableSQLite", path: "../Integrations/SQLite"),
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.0"),
        .package(name: "StoreFlowablePostgres", path: "../Integrations/Postgres"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "StoreFlowableBenchmarks",
            dependencies: [
                .product(name: "StoreFlowable", package: "StoreFlowable"),
                .product(name: "StoreFlowableFoundation", package: "StoreFlowable"),
                .product(name: "StoreFlowableSQLite", package: "StoreFlowableSQLite"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "StoreFlowablePostgres", package: "StoreFlowablePostgres"),
                // Starts the throwaway PostgreSQL server the PostgresCache benchmarks run against.
                .product(name: "StoreFlowablePostgresTestServer", package: "StoreFlowablePostgres"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/StoreFlowableBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
