import Foundation
import Testing

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// The `DiskCacheCrashWriter` child process (Sources/diskcache-crash-writer), run by the tests that
/// kill a writer or need a process of their own, with its output read line by line.
final class CrashWriterProcess {
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
    private var buffer: [UInt8] = []
    /// Every line read so far, for failure messages.
    private(set) var transcript: [String] = []

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

    deinit {
        if process.isRunning { kill() }
    }

    /// The writer's process id.
    var processIdentifier: Int32 { process.processIdentifier }

    /// The next line the writer printed, or `nil` when its output ended.
    ///
    /// Waits for output with `poll`, up to `timeout` without any new byte (a hung writer fails the test
    /// instead of hanging it).
    func readLine(timeout: Duration = .seconds(20)) throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                transcript.append(line)
                return line
            }
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
            if count <= 0 {
                guard !buffer.isEmpty else { return nil }
                let line = String(decoding: buffer, as: UTF8.self)
                buffer = []
                transcript.append(line)
                return line
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Every remaining line, until the writer's output ends.
    func readAllLines() throws -> [String] {
        var lines: [String] = []
        while let line = try readLine() { lines.append(line) }
        return lines
    }

    /// Kills the writer with `SIGKILL` at once and waits for it to end.
    func kill() {
        #if canImport(Darwin)
            _ = Darwin.kill(process.processIdentifier, SIGKILL)
        #else
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
        #endif
        process.waitUntilExit()
    }

    /// Waits for the writer to end and returns its exit status.
    func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// A failure of the child process.
struct CrashWriterFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
