import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `sqlite-cache-writer` child process (Sources/sqlite-cache-writer): writes entries until it is
/// killed, printing each write it completed; its output is read line by line.
///
/// Every wait (for output, for the process to end) is made on a thread of its own, never on the
/// cooperative pool; a test calls its methods one at a time.
final class WriterProcess: Sendable {
    static let binaryName = "sqlite-cache-writer"

    /// Where the binary is looked for: next to the running test binary (SwiftPM builds every product of
    /// the package in one folder, and the test target depends on the writer, so `swift build
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

    private let process = Process()
    private let output: FileHandle
    /// The output read so far.
    private let reading = Mutex(Output())

    /// The last lines read, for failure messages.
    var transcript: [String] { reading.withLock { $0.transcript } }

    /// Starts the writer on the cache `name` in the file at `path`, writing `keys` keys in turn with
    /// `payloadBytes` bytes of payload each.
    init(path: String, name: String, keys: Int, payloadBytes: Int) throws {
        let binary = try #require(
            Self.candidatePaths.first { FileManager.default.isExecutableFile(atPath: $0) },
            "\(Self.binaryName) not found at \(Self.candidatePaths); build with `swift build --build-tests`")
        let pipe = Pipe()
        process.executableURL = URL(filePath: binary)
        process.arguments = [path, name, String(keys), String(payloadBytes)]
        process.standardOutput = pipe
        output = pipe.fileHandleForReading
        try process.run()
    }

    /// Kills a writer still running, without waiting for it (Foundation reaps it): a test that ended
    /// early, by a failure, is not held up.
    deinit {
        if process.isRunning { sendKill() }
    }

    /// The next line the writer printed, or `nil` when its output ended; waits, on a thread of its own
    /// (see ``onThreadOfItsOwn(_:)``), at most `timeout` for it (a hung writer fails the test instead of
    /// hanging it).
    func readLine(timeout: Duration = .seconds(20)) async throws -> String? {
        try await onThreadOfItsOwn { try self.readLineBlocking(timeout: timeout) }
    }

    /// Reads lines, on a thread of its own, until the writer reports its `count`-th completed write
    /// (counting from 1).
    func waitForWrites(_ count: Int) async throws {
        try await onThreadOfItsOwn {
            while let line = try self.readLineBlocking(timeout: .seconds(20)) {
                if line.hasPrefix("failed") { throw WriterFailure("the writer failed: \(line)") }
                if line == "wrote \(count - 1)" { return }
            }
            throw WriterFailure("the writer ended before \(count) writes; last lines: \(self.transcript)")
        }
    }

    /// Kills the writer with `SIGKILL` and waits, on a thread of its own, for it to end.
    func kill() async {
        sendKill()
        await onThreadOfItsOwn { self.process.waitUntilExit() }
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
            let ready = poll(&descriptor, 1, Int32(timeout.components.seconds * 1000))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { throw WriterFailure("no output for \(timeout); last lines: \(transcript)") }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(output.fileDescriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return nil }
            reading.withLock { $0.buffer.append(contentsOf: chunk[..<count]) }
        }
    }

    /// The writer's output read so far.
    private struct Output: Sendable {
        /// Bytes read but not yet returned in a line.
        var buffer: [UInt8] = []
        /// The last 20 lines returned.
        var transcript: [String] = []

        /// Takes the first complete line out of the buffer; `nil` when it holds none.
        mutating func takeLine() -> String? {
            guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            let line = String(decoding: buffer[..<newline], as: UTF8.self)
            buffer.removeSubrange(...newline)
            transcript = Array((transcript + [line]).suffix(20))
            return line
        }
    }
}

/// A failure of the writer process.
struct WriterFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
