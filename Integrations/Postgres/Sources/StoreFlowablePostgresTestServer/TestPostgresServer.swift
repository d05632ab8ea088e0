import Foundation
public import PostgresNIO

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real PostgreSQL server for the tests and the benchmarks, in a fresh temporary folder, on a free
/// loopback port.
///
/// `initdb` makes a cluster with trust authentication for the user `storeflowable`, and `pg_ctl` starts
/// `postgres` on `127.0.0.1` with its socket in the folder. The binaries are found on `PATH` or under
/// `/usr/lib/postgresql/*/bin` (the newest version). PostgreSQL refuses to run as root: as root, every
/// command runs as the `postgres` user (`runuser`), which owns the folder.
///
/// The server is stopped (`pg_ctl stop -m immediate`) and its folder deleted by a watchdog process
/// started with it, in a session of its own, once the process that made it is gone: when it ends, and
/// also when it crashes or is killed. ``shared`` is started once per process; a test that stops its
/// server makes one of its own with ``init()``.
///
/// Making, starting and stopping a server wait for `initdb` and `pg_ctl` (seconds on a busy machine),
/// blocking the calling thread. Async code calls ``launch()``, ``launchShared()``, ``start()-4pabz``
/// and ``stop(_:)-5cdzs`` instead, which wait on a thread of their own: a blocked thread of Swift's
/// concurrency pool (as many as the machine has cores) stops every task of the process meanwhile, and
/// two tests starting servers at once on a 2-core machine stopped every other test's statements for
/// long enough to time out.
public final class TestPostgresServer: Sendable {
    /// Why the server could not be set up.
    public struct SetupError: Error, CustomStringConvertible {
        /// What went wrong, with the command's output.
        public var description: String
    }

    /// The server every test (or benchmark) of a process shares, started by the first that asks for it.
    public static let shared = Result { () throws(SetupError) in try TestPostgresServer() }

    /// The folder holding the cluster (`data`), the socket and the log.
    public let folder: String
    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The folder of `initdb`, `pg_ctl` and `postgres`.
    private let binaries: String
    /// The user the commands run as, when the tests run as root.
    private let runAs: String?

    /// Makes a cluster in a new temporary folder and starts a server on a free port.
    ///
    /// - Throws: ``SetupError`` when the binaries are missing or a command fails.
    public init() throws(SetupError) {
        binaries = try Self.findBinaries()
        runAs = getuid() == 0 ? "postgres" : nil
        var template = Array("/tmp/storeflowable-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SetupError(description: "mkdtemp failed: errno \(errno)") }
        folder = String(cString: made)
        if let runAs {
            guard let user = getpwnam(runAs) else {
                throw SetupError(description: "running as root, but there is no user \(runAs) to run PostgreSQL as")
            }
            guard chown(folder, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
                throw SetupError(description: "chown \(folder) failed: errno \(errno)")
            }
        }
        port = try Self.freePort()
        // Before initdb, so that the folder is deleted also when the process dies (or a command fails)
        // while the cluster is being made; stopping a server that never started fails harmlessly.
        startWatchdog()
        try run(
            "initdb", ["-D", "\(folder)/data", "-A", "trust", "-U", "storeflowable", "-E", "UTF8", "--no-sync"])
        try start()
    }

    /// Makes a cluster in a new temporary folder and starts a server on a free port (``init()``),
    /// waiting on a thread of its own, not on one of Swift's concurrency pool.
    ///
    /// - Returns: The running server.
    /// - Throws: ``SetupError`` when the binaries are missing or a command fails.
    public static func launch() async throws(SetupError) -> TestPostgresServer {
        try await onThreadOfItsOwn { () throws(SetupError) in try TestPostgresServer() }
    }

    /// The ``shared`` server, started by the first caller on a thread of its own, not on one of Swift's
    /// concurrency pool.
    ///
    /// - Returns: The running server.
    /// - Throws: ``SetupError`` when it could not start.
    public static func launchShared() async throws(SetupError) -> TestPostgresServer {
        try await onThreadOfItsOwn { () throws(SetupError) in try shared.get() }
    }

    /// Starts the server again (``start()-2ntk9``), waiting on a thread of its own.
    ///
    /// - Throws: ``SetupError`` with the server's log when it does not start.
    public func start() async throws(SetupError) {
        try await Self.onThreadOfItsOwn { () throws(SetupError) in try self.start() }
    }

    /// Stops the server (``stop(_:)-6a8ys``), waiting on a thread of its own.
    ///
    /// - Parameter mode: How to stop it; ``StopMode/immediate`` by default.
    /// - Throws: ``SetupError`` when `pg_ctl` fails.
    public func stop(_ mode: StopMode = .immediate) async throws(SetupError) {
        try await Self.onThreadOfItsOwn { () throws(SetupError) in try self.stop(mode) }
    }

    /// Runs `work` on a new thread and returns its result, without blocking the caller's thread.
    ///
    /// - Parameter work: Blocking work.
    /// - Returns: What `work` returned.
    /// - Throws: What `work` threw.
    private static func onThreadOfItsOwn<Output: Sendable>(
        _ work: @escaping @Sendable () throws(SetupError) -> Output
    ) async throws(SetupError) -> Output {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Output, SetupError>, Never>) in
            Thread.detachNewThread {
                continuation.resume(returning: Result { () throws(SetupError) in try work() })
            }
        }
        return try result.get()
    }

    /// Starts the server (again) on ``port``, waiting until it accepts connections.
    ///
    /// - Throws: ``SetupError`` with the server's log when it does not start.
    public func start() throws(SetupError) {
        let options =
            // No fsync: a stopped server keeps what it committed (the system keeps the files), which is
            // all the tests need. Commits stay synchronous: a server stopped at once must not lose them.
            "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=off"
            + " -c full_page_writes=off"
        do {
            try run(
                "pg_ctl",
                ["-D", "\(folder)/data", "-l", "\(folder)/server.log", "-w", "-t", "60", "-o", options, "start"])
        } catch {
            let log = (try? String(contentsOfFile: "\(folder)/server.log", encoding: .utf8)) ?? ""
            throw SetupError(description: "\(error)\nserver log:\n\(log)")
        }
    }

    /// How ``stop(_:)`` stops the server: `pg_ctl stop -m <mode>`.
    public enum StopMode: String, Sendable {
        /// Connections are cut at once and nothing is flushed (`immediate`).
        case immediate
        /// Each backend ends its connection with an error (SQLSTATE 57P01) and the server writes a
        /// checkpoint before it exits (`fast`, what `pg_ctl restart` does).
        case fast
    }

    /// Stops the server (`pg_ctl stop`), at once by default: connections are cut, nothing is flushed.
    ///
    /// - Parameter mode: How to stop it; ``StopMode/immediate`` by default.
    /// - Throws: ``SetupError`` when `pg_ctl` fails.
    public func stop(_ mode: StopMode = .immediate) throws(SetupError) {
        try run("pg_ctl", ["-D", "\(folder)/data", "-m", mode.rawValue, "-w", "stop"])
    }

    /// A client configuration for the database `postgres` as `storeflowable`, without TLS, that gives
    /// up connecting after `connectTimeout`.
    ///
    /// - Parameters:
    ///   - connectTimeout: The connect timeout.
    ///   - statementTimeout: When set, the server's `statement_timeout` and `lock_timeout` for the
    ///     client's connections.
    /// - Returns: The configuration.
    public func configuration(connectTimeout: Duration = .seconds(3), statementTimeout: Duration? = nil)
        -> PostgresClient.Configuration
    {
        var configuration = PostgresClient.Configuration(
            host: "127.0.0.1", port: port, username: "storeflowable", password: nil, database: "postgres",
            tls: .disable)
        configuration.options.connectTimeout = connectTimeout
        configuration.options.maximumConnections = 8
        if let statementTimeout {
            // What Docs/ServerCaches.md tells users to set: the server ends what the cache gave up on.
            let milliseconds = String(
                statementTimeout.components.seconds * 1_000 + statementTimeout.components.attoseconds
                    / 1_000_000_000_000_000)
            configuration.options.additionalStartupParameters = [
                ("statement_timeout", milliseconds), ("lock_timeout", milliseconds),
            ]
        }
        return configuration
    }

    // MARK: Processes

    /// Runs the PostgreSQL binary `tool` with `arguments` (as the `postgres` user under root) and waits
    /// for it.
    ///
    /// - Parameters:
    ///   - tool: `initdb` or `pg_ctl`.
    ///   - arguments: Its arguments.
    /// - Throws: ``SetupError`` with its output when it fails.
    private func run(_ tool: String, _ arguments: [String]) throws(SetupError) {
        let command = ["\(binaries)/\(tool)"] + arguments
        let output = "\(folder)/\(tool).out"
        let line = command.joined(separator: " ")
        let status = try Self.spawn(asUser(command), output: output, wait: true)
        guard status == 0 else {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw SetupError(description: "\(line) exited with status \(status):\n\(text)")
        }
    }

    /// `command`, run as the `postgres` user when the tests run as root.
    ///
    /// - Parameter command: The program and its arguments.
    /// - Returns: The command to spawn.
    private func asUser(_ command: [String]) -> [String] {
        guard let runAs else { return command }
        return [Self.runuser, "-u", runAs, "--"] + command
    }

    /// Starts a shell, in a session of its own, that waits for this process to end, then stops the
    /// server and deletes the folder.
    private func startWatchdog() {
        let stop = asUser(["\(binaries)/pg_ctl", "-D", "\(folder)/data", "-m", "immediate", "-w", "stop"])
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            \(stop.map { "'\($0)'" }.joined(separator: " ")) >/dev/null 2>&1
            rm -rf '\(folder)'
            """
        let setsid = "/usr/bin/setsid"
        let shell = ["/bin/sh", "-c", script]
        _ = try? Self.spawn(
            FileManager.default.isExecutableFile(atPath: setsid) ? [setsid] + shell : shell, output: "/dev/null",
            wait: false)
    }

    /// Starts `command` with standard input from `/dev/null` and its output in the file `output`, with
    /// `posix_spawn` and, when `wait` is set, waits for it with `waitpid`.
    ///
    /// Not Foundation's `Process`: on Linux it hands the child a socket that tells it when the child
    /// ended, and the server that `pg_ctl start` leaves running inherits that socket, so
    /// `waitUntilExit()` would wait for the server to stop.
    ///
    /// The child gets no other descriptor of this process (see `closeInheritedDescriptors(_:_:)`):
    /// the server that `pg_ctl start` leaves running, the watchdog and their children would otherwise
    /// keep every socket and pipe that was open here at that moment (NIO opens its sockets without
    /// close-on-exec). A client's connection that this process then closes stays open in them, so its
    /// peer never sees the close; a listening socket closed here keeps accepting connections; a port
    /// bound here for a moment (`freePort()`) stays bound.
    ///
    /// - Parameters:
    ///   - command: The program's path and its arguments.
    ///   - output: The file receiving standard output and error (created or truncated).
    ///   - wait: Whether to wait for the command to end.
    /// - Returns: The exit status (or 128 plus the signal), or 0 when not waiting.
    /// - Throws: ``SetupError`` when the command cannot be started.
    private static func spawn(_ command: [String], output: String, wait: Bool) throws(SetupError) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        closeInheritedDescriptors(&actions, &attributes)
        var arguments: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid = pid_t()
        let started = posix_spawn(&pid, command[0], &actions, &attributes, &arguments, environ)
        guard started == 0 else {
            throw SetupError(description: "cannot start \(command.joined(separator: " ")): errno \(started)")
        }
        guard wait else { return 0 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS and WTERMSIG, which are macros in C.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Makes the spawned child close every descriptor above standard error before it runs.
    ///
    /// glibc 2.34 and later: `posix_spawn_file_actions_addclosefrom_np(actions, 3)`, which closes them
    /// in the child, after the fork: nothing this process opens meanwhile, on another thread, can slip
    /// through. Its header declares it only for `_GNU_SOURCE`, which Swift's Glibc module does not
    /// define, so it is looked up by name. An older glibc: every descriptor above 2 now open is marked
    /// close-on-exec (one that another thread opens between this and the spawn still leaks). Darwin:
    /// `POSIX_SPAWN_CLOEXEC_DEFAULT`.
    ///
    /// - Parameters:
    ///   - actions: The spawn's file actions, which already set up descriptors 0 to 2.
    ///   - attributes: The spawn's attributes.
    private static func closeInheritedDescriptors(
        _ actions: inout posix_spawn_file_actions_t, _ attributes: inout posix_spawnattr_t
    ) {
        #if canImport(Glibc)
            typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            if let program = dlopen(nil, RTLD_NOW),
                let symbol = dlsym(program, "posix_spawn_file_actions_addclosefrom_np")
            {
                let addCloseFrom = unsafeBitCast(symbol, to: AddCloseFrom.self)
                if addCloseFrom(&actions, 3) == 0 { return }
            }
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
                let flags = fcntl(descriptor, F_GETFD)
                if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
            }
        #elseif canImport(Darwin)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
        #endif
    }

    /// `runuser`, in `/usr/sbin` or `/sbin`.
    private static var runuser: String {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") ? "/usr/sbin/runuser" : "/sbin/runuser"
    }

    /// The folder holding `initdb` and `pg_ctl`: from `PATH`, else the newest `/usr/lib/postgresql/*/bin`.
    ///
    /// - Returns: The folder.
    /// - Throws: ``SetupError`` saying how to install PostgreSQL when neither has them.
    private static func findBinaries() throws(SetupError) -> String {
        let fileManager = FileManager.default
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init)
        where fileManager.isExecutableFile(atPath: "\(folder)/initdb")
            && fileManager.isExecutableFile(atPath: "\(folder)/pg_ctl")
        {
            return folder
        }
        let versions = (try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let folder = "/usr/lib/postgresql/\(version)/bin"
            if fileManager.isExecutableFile(atPath: "\(folder)/initdb") { return folder }
        }
        throw SetupError(
            description: "PostgreSQL's initdb and pg_ctl are neither on PATH nor in /usr/lib/postgresql/*/bin: "
                + "install the server (apt-get install postgresql) to run these tests")
    }

    /// A TCP port on 127.0.0.1 that nothing listens on now.
    ///
    /// - Returns: The port the system chose for a socket bound to port 0.
    /// - Throws: ``SetupError`` when the socket calls fail.
    private static func freePort() throws(SetupError) -> Int {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw SetupError(description: "socket failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else { throw SetupError(description: "bind failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
