import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `postgres-cache-instance` child process (Sources/postgres-cache-instance): a server instance with
/// a store over a shared `PostgresCache`, driven by line commands on its standard input, answering one
/// line per event on its standard output.
///
/// A thread of its own reads the output (blocking reads never hold a thread of the cooperative pool)
/// into an ``InstanceOutput``, which the test waits on with a deadline: a hung child fails the test
/// instead of hanging it. The child is killed (`SIGKILL`) when this object goes away, and it quits on
/// its own when its input ends, so it never outlives the test process.
final class InstanceProcess: Sendable {
    static let binaryName = "postgres-cache-instance"

    /// Where the binary is looked for: next to the running test binary (SwiftPM builds every product of
    /// the package in one folder, and the test target depends on the executable, so `swift build
    /// --build-tests` builds it).
    static var candidatePaths: [String] {
        var folders: [URL] = []
        #if os(Linux)
            if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
                folders.append(URL(filePath: executable).deletingLastPathComponent())
            }
        #endif
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            folders.append(bundle.bundleURL.deletingLastPathComponent())
        }
        folders.append(URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent())
        return folders.map { $0.appending(path: binaryName).path(percentEncoded: false) }
    }

    /// Writing to a child that died must fail with `EPIPE`, not kill the test process with `SIGPIPE`.
    private static let ignoreBrokenPipes: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()

    /// The instance's name (its `--instance`).
    let name: String
    /// What it printed.
    let output: InstanceOutput
    /// The write end of its standard input, non-blocking.
    private let input: Int32

    /// Starts an instance on `server` and waits until it prints `ready`.
    ///
    /// - Parameters:
    ///   - name: The instance's name.
    ///   - server: The server.
    ///   - cache: The cache name every instance of the test shares.
    ///   - delay: How long its origin takes per call.
    ///   - timeout: Its bound on each database operation and on connecting.
    ///   - lease: The lease of its fetch claims.
    /// - Returns: The running instance.
    /// - Throws: ``InstanceFailure`` when the binary is missing, cannot start, or does not get ready.
    static func start(
        _ name: String, server: TestPostgresServer, cache: String, delay: Duration = .zero,
        timeout: Duration = .seconds(2), lease: Duration = .seconds(10)
    ) async throws -> InstanceProcess {
        let instance = try InstanceProcess(
            name: name,
            arguments: [
                "--host", "127.0.0.1", "--port", String(server.port), "--user", "storeflowable", "--database",
                "postgres", "--cache", cache, "--instance", name, "--delay-ms", String(milliseconds(delay)),
                "--timeout-ms", String(milliseconds(timeout)), "--lease-ms", String(milliseconds(lease)),
            ])
        let first = try await instance.line { $0 == "ready" || $0.hasPrefix("failed") || $0.hasPrefix("usage") }
        guard first == "ready" else { throw instance.failure("did not start: \(first)") }
        return instance
    }

    /// Spawns the binary with `arguments`, its standard input and output (and error) on pipes.
    private init(name: String, arguments: [String]) throws {
        _ = Self.ignoreBrokenPipes
        guard let binary = Self.candidatePaths.first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            throw InstanceFailure(
                "\(Self.binaryName) not found at \(Self.candidatePaths); build with `swift build --build-tests`")
        }
        self.name = name
        let toChild = try Self.makePipe()
        let fromChild = try Self.makePipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The pipes are close-on-exec (so that no other child, a PostgreSQL server started meanwhile
        // included, inherits them and keeps them open); the copies on 0, 1 and 2 are not.
        posix_spawn_file_actions_adddup2(&actions, toChild.read, 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild.write, 1)
        posix_spawn_file_actions_adddup2(&actions, fromChild.write, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child gets SIGPIPE's default action back (it dies if the test process went away while it
        // writes) and no blocked signals.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let command = [binary] + arguments
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let started = posix_spawn(&pid, binary, &actions, &attributes, &argv, environ)
        close(toChild.read)
        close(fromChild.write)
        guard started == 0 else {
            close(toChild.write)
            close(fromChild.read)
            throw InstanceFailure("cannot start \(binary): errno \(started)")
        }
        _ = fcntl(toChild.write, F_SETFL, fcntl(toChild.write, F_GETFL) | O_NONBLOCK)
        input = toChild.write
        output = InstanceOutput(pid: pid)
        Self.startReading(fromChild.read, into: output, name: name)
    }

    deinit {
        output.signal(SIGKILL)
        close(input)
    }

    // MARK: Commands and answers

    /// Sends one command line.
    ///
    /// - Parameter command: The command, without a newline.
    /// - Throws: ``InstanceFailure`` when the process does not take it (it ended, or its input is full).
    func send(_ command: String) throws {
        output.note(command)
        var line = command + "\n"
        let written = line.withUTF8 { bytes in
            var written = -1
            repeat { written = write(input, bytes.baseAddress, bytes.count) } while written < 0 && errno == EINTR
            return written
        }
        // A command is a few bytes: the non-blocking write takes it whole, or fails when the child stopped
        // reading (its input is full) or is gone.
        guard written == line.utf8.count else { throw failure("could not send \(command): errno \(errno)") }
    }

    /// Waits for the first unread line that `accepts` takes, at most `timeout`.
    ///
    /// - Parameters:
    ///   - timeout: The longest wait.
    ///   - accepts: Chooses the line.
    /// - Returns: The line, which later waits no longer see.
    /// - Throws: ``InstanceFailure`` with the transcript when no such line came in time or the process
    ///   ended.
    func line(timeout: Duration = .seconds(20), matching accepts: @escaping @Sendable (String) -> Bool)
        async throws -> String
    {
        switch await output.next(accepting: accepts, timeout: timeout) {
        case .line(let line): return line
        case .ended(let status): throw failure("ended (status \(status)) before the line the test waited for")
        case .timedOut: throw failure("printed no line the test waited for within \(timeout)")
        }
    }

    /// Waits for the first unread line starting with `prefix`.
    ///
    /// - Parameters:
    ///   - prefix: The line's start, e.g. `"got K "`.
    ///   - timeout: The longest wait.
    /// - Returns: The rest of the line after `prefix`.
    /// - Throws: ``InstanceFailure`` as ``line(timeout:matching:)``.
    func line(startingWith prefix: String, timeout: Duration = .seconds(20)) async throws -> String {
        String(try await line(timeout: timeout) { $0.hasPrefix(prefix) }.dropFirst(prefix.count))
    }

    /// Sends `command` and waits for its answer: the first unread line that starts with one of
    /// `answers`.
    ///
    /// - Parameters:
    ///   - command: The command.
    ///   - answers: The starts of the lines that answer it, e.g. `["got K ", "error K "]`.
    ///   - timeout: The longest wait.
    /// - Returns: The whole answering line.
    /// - Throws: ``InstanceFailure`` as ``send(_:)`` and ``line(timeout:matching:)``.
    func ask(_ command: String, answers: [String], timeout: Duration = .seconds(20)) async throws -> String {
        try send(command)
        return try await line(timeout: timeout) { line in answers.contains { line.hasPrefix($0) } }
    }

    // MARK: Ending

    /// Sends `signal` (`SIGKILL` for a crash) and waits until the process ended.
    ///
    /// - Parameter signal: The signal.
    /// - Returns: The exit status (128 plus the signal when it killed the process).
    /// - Throws: ``InstanceFailure`` when the process did not end within 20 seconds.
    @discardableResult
    func kill(_ signal: Int32 = SIGKILL) async throws -> Int32 {
        output.signal(signal)
        return try await waitForExit(timeout: .seconds(20))
    }

    /// Ends the process gracefully (`quit`), or kills it when it does not exit within `timeout`.
    ///
    /// - Parameter timeout: How long it may take to shut down.
    /// - Returns: The exit status.
    /// - Throws: ``InstanceFailure`` when it had to be killed.
    @discardableResult
    func terminate(timeout: Duration = .seconds(20)) async throws -> Int32 {
        if output.status == nil { try? send("quit") }
        do {
            return try await waitForExit(timeout: timeout)
        } catch {
            _ = try? await kill()
            throw error
        }
    }

    /// Waits until the process ended and was reaped.
    ///
    /// - Parameter timeout: The longest wait.
    /// - Returns: The exit status.
    /// - Throws: ``InstanceFailure`` when it is still running.
    func waitForExit(timeout: Duration) async throws -> Int32 {
        switch await output.next(accepting: nil, timeout: timeout) {
        case .ended(let status): return status
        case .line, .timedOut: throw failure("still running after \(timeout)")
        }
    }

    /// A failure naming this instance, with the end of its transcript.
    func failure(_ what: String) -> InstanceFailure {
        InstanceFailure("instance \(name) \(what); transcript:\n\(output.transcript())")
    }

    // MARK: Plumbing

    /// A pipe whose two ends are close-on-exec from the start, so that no child another test spawns
    /// meanwhile inherits them: on Linux a Unix socket pair made with `SOCK_CLOEXEC` (Glibc's module
    /// has no `pipe2`), used one way; elsewhere a pipe marked at once, which leaves a narrow window in
    /// which a child spawned by another thread could inherit it.
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        #if os(Linux)
            let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends)
        #else
            let made = pipe(&ends)
            if made == 0 { for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) } }
        #endif
        guard made == 0 else { throw InstanceFailure("pipe failed: errno \(errno)") }
        return (ends[0], ends[1])
    }

    /// Starts the thread that reads the child's output into `output`, line by line, until it ends; then
    /// waits for the child to exit and reaps it.
    private static func startReading(_ descriptor: Int32, into output: InstanceOutput, name: String) {
        let reader = Thread {
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &chunk, chunk.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending.append(contentsOf: chunk[..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    output.append(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            if !pending.isEmpty { output.append(String(decoding: pending, as: UTF8.self)) }
            close(descriptor)
            // Waits for the exit without reaping (WNOWAIT), so that the id stays the child's until
            // `reap()` takes it under the lock that `signal(_:)` holds.
            var info = siginfo_t()
            while waitid(P_PID, id_t(output.pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
            output.reap()
        }
        reader.name = "instance \(name)"
        reader.start()
    }

    /// `duration` in whole milliseconds.
    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }
}
