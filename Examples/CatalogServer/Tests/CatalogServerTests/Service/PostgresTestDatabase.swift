import Foundation
import StoreFlowablePostgresTestServer
import Testing

/// The throwaway PostgreSQL server of the tests that run several service instances on one database
/// (`TestPostgresServer`, started once per test process), and whether it can run here.
enum PostgresTestDatabase {
    /// Whether PostgreSQL's server binaries (`initdb`, `pg_ctl`) are on `PATH` or in
    /// `/usr/lib/postgresql/*/bin`, where `TestPostgresServer` looks for them; when they are, the shared
    /// server is started here. Without them the tests that need a server are skipped, with
    /// ``skipReason``.
    ///
    /// Swift Testing evaluates a suite's `.enabled(if:)` while it plans the run, before any test runs,
    /// so the server starts before any test has opened a socket. (`TestPostgresServer` closes the test
    /// process's descriptors in the processes it spawns, so a socket open at that moment would not leak
    /// into them either; starting early keeps the server's start out of the tests' time limits.)
    static let isAvailable: Bool = {
        let present = binariesArePresent()
        if present { _ = TestPostgresServer.shared }
        return present
    }()

    /// Whether `initdb` and `pg_ctl` are on `PATH` or in `/usr/lib/postgresql/*/bin`.
    private static func binariesArePresent() -> Bool {
        let fileManager = FileManager.default
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders =
            path.split(separator: ":").map(String.init)
            + ((try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).map {
                "/usr/lib/postgresql/\($0)/bin"
            }
        return folders.contains { folder in
            fileManager.isExecutableFile(atPath: "\(folder)/initdb")
                && fileManager.isExecutableFile(atPath: "\(folder)/pg_ctl")
        }
    }

    /// Why the PostgreSQL tests are skipped when ``isAvailable`` is `false`.
    static let skipReason: Comment =
        "PostgreSQL's server binaries (initdb, pg_ctl) are neither on PATH nor in /usr/lib/postgresql/*/bin: install them (apt-get install postgresql) to run the multi-instance tests"

    /// The URL of the shared test server's database, starting the server on first use.
    ///
    /// - Returns: `postgres://storeflowable@127.0.0.1:PORT/postgres`.
    /// - Throws: Why the server could not start.
    static func url() throws -> String {
        let server = try TestPostgresServer.shared.get()
        return "postgres://storeflowable@127.0.0.1:\(server.port)/postgres"
    }

    /// A cache name no other test uses, so that tests sharing the server never share tables.
    ///
    /// - Returns: `t` and random lowercase letters and digits.
    static func uniqueCacheName() -> String {
        "t" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
}
