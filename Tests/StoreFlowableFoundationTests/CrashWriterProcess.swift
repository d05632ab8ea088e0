import Foundation
import StoreFlowable
import Testing

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// The `DiskCacheCrashWriter` child process (Sources/diskcache-crash-writer), run by the tests that
/// kill a writer or need a process of their own, with its output read line by line.
///
/// Every wait (for output, for the process to end) is made on a thread of its own, never on the
/// cooperative pool; a test calls its methods one at a time.
final class CrashWriterProcess: Sendable {
    /// The name of the writer's binary.
    static let binaryName = "DiskCacheCrashWriter"

    /// Where the writer's binary is looked for: the `DISKCACHE_CRASH_WRITER` environment variable, else
    /// next to the running test binary (SwiftPM builds every product of the package in one folder, and
    /// the test target depends on the writer so that `swift build --build-tests` and `swift test`
    /// build it).
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
        var paths = ProcessInfo.processInfo.environment["DISKCACHE_CRASH_WRITER"].map { [$0] } ?? []
        for path in folders.map({ $0.appending(path: binaryName).path(percentEncoded: false) })
        where !paths.contains(path) {
            paths.append(path)
        }
        return paths
    }

    /// The writer's binary, or `nil` if it is not built.
    static var binaryPath: String? {
        candidatePaths.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The writer's binary; records a failure naming where it was looked for when it is missing.
    static func requireBinary(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(
            binaryPath,
            """
            \(binaryName) was not found (looked at \(candidatePaths.joined(separator: ", "))). Build it with \
            `swift build --build-tests` (the test target depends on it) or set DISKCACHE_CRASH_WRITER.
            """,
            sourceLocation: sourceLocation)
    }

    private let process = Process()
    private let output: FileHandle
    /// The output read so far.
    private let reading = LockedValue(Output())

    /// Every line read so far, for failure messages.
    var transcript: [String] { reading.withLock { $0.transcript } }

    /// Starts the writer with `arguments`; its standard output is read with ``readLine(timeout:)``.
    init(_ arguments: [String]) throws {
        let binary = try Self.requireBinary()
        let pipe = Pipe()
        process.executableURL = URL(filePath: binary)
        process.arguments = arguments
        process.standardOutput = pipe
        output = pipe.fileHandleForReading
        try process.run()
    }

    /// Kills a writer still running, without waiting for it (Foundation reaps it): a test that ended
    /// early, by a failure, is not held up.
    deinit {
        if process.isRunning { sendKill() }
    }

    /// The writer's process id.
    var processIdentifier: Int32 { process.processIdentifier }

    /// The next line the writer printed, or `nil` when its output ended.
    ///
    /// Waits for output with `poll`, on a thread of its own (see ``onThreadOfItsOwn(_:)``), up to
    /// `timeout` without any new byte (a hung writer fails the test instead of hanging it).
    func readLine(timeout: Duration = .seconds(20)) async throws -> String? {
        try await onThreadOfItsOwn { try self.readLineBlocking(timeout: timeout) }
    }

    /// Every remaining line, until the writer's output ends; read on a thread of its own.
    func readAllLines() async throws -> [String] {
        try await onThreadOfItsOwn {
            var lines: [String] = []
            while let line = try self.readLineBlocking(timeout: .seconds(20)) { lines.append(line) }
            return lines
        }
    }

    /// Kills the writer with `SIGKILL` at once and waits, on a thread of its own, for it to end.
    func kill() async {
        sendKill()
        await onThreadOfItsOwn { self.process.waitUntilExit() }
    }

    /// Kills the writer with `SIGKILL` as soon as `watcher` sees a new file whose name starts with
    /// `prefix` and is not in `ignoring` (or after `timeout`), and waits for it to end.
    ///
    /// The wait, the kill and the wait for the end are made on one thread of its own, so the kill follows
    /// the file's creation without a hop back to the calling task: a temporary file lives for about a
    /// millisecond.
    func kill(onceNewFileIn watcher: FolderWatcher, prefix: String, ignoring: Set<String>, timeout: Duration) async {
        await onThreadOfItsOwn {
            _ = watcher.waitForNewFile(prefix: prefix, ignoring: ignoring, timeout: timeout)
            self.sendKill()
            self.process.waitUntilExit()
        }
    }

    /// Waits, on a thread of its own, for the writer to end and returns its exit status.
    func waitForExit() async -> Int32 {
        await onThreadOfItsOwn {
            self.process.waitUntilExit()
            return self.process.terminationStatus
        }
    }

    /// Sends `SIGKILL` to the writer.
    private func sendKill() {
        #if canImport(Darwin)
            _ = Darwin.kill(process.processIdentifier, SIGKILL)
        #else
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
        #endif
    }

    /// ``readLine(timeout:)``, blocking the calling thread.
    private func readLineBlocking(timeout: Duration) throws -> String? {
        while true {
            if let line = reading.withLock({ $0.takeLine() }) { return line }
            var descriptor = pollfd(fd: output.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(timeout.components.seconds * 1000)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else {
                throw CrashWriterFailure("no output from the writer for \(timeout); it printed: \(transcript)")
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(output.fileDescriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return reading.withLock { $0.takeRest() } }
            reading.withLock { $0.buffer.append(contentsOf: chunk[..<count]) }
        }
    }

    /// The writer's output read so far.
    private struct Output: Sendable {
        /// Bytes read but not yet returned in a line.
        var buffer: [UInt8] = []
        /// Every line returned.
        var transcript: [String] = []

        /// Takes the first complete line out of the buffer; `nil` when it holds none.
        mutating func takeLine() -> String? {
            guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            let line = String(decoding: buffer[..<newline], as: UTF8.self)
            buffer.removeSubrange(...newline)
            transcript.append(line)
            return line
        }

        /// Takes what is left in the buffer as the last line, once the output ended; `nil` when nothing is.
        mutating func takeRest() -> String? {
            guard !buffer.isEmpty else { return nil }
            let line = String(decoding: buffer, as: UTF8.self)
            buffer = []
            transcript.append(line)
            return line
        }
    }
}

/// A failure of the child process.
struct CrashWriterFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
