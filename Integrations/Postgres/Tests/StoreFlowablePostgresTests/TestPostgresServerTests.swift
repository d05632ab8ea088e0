import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The throwaway server keeps none of the test process's descriptors: a socket or a pipe open in the
/// test process when the server starts is not held by it, so closing it here closes it.
@Suite(.timeLimit(.minutes(1))) struct TestPostgresServerTests {
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "needs /proc"))
    func theServerHoldsNoDescriptorOfTheTestProcess() async throws {
        // Opened without close-on-exec, as NIO opens its sockets.
        var sockets: [Int32] = [-1, -1]
        #if canImport(Glibc)
            let streamType = Int32(SOCK_STREAM.rawValue)
        #else
            let streamType = SOCK_STREAM
        #endif
        try #require(socketpair(AF_UNIX, streamType, 0, &sockets) == 0)
        var pipeEnds: [Int32] = [-1, -1]
        try #require(pipe(&pipeEnds) == 0)
        let ours = sockets + pipeEnds
        defer { for descriptor in ours { close(descriptor) } }
        let opened = Set(ours.compactMap { Self.target(of: "/proc/self/fd/\($0)") })
        try #require(opened.count == 3)  // one socket pair (`socket:[…]` twice) and one pipe

        let server = try await TestPostgresServer.launch()
        defer { try? server.stop() }
        let pidFile = try String(contentsOfFile: "\(server.folder)/data/postmaster.pid", encoding: .utf8)
        let postmaster = try #require(pidFile.split(separator: "\n").first.flatMap { Int32($0) })
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(postmaster)/fd")
            .compactMap { Self.target(of: "/proc/\(postmaster)/fd/\($0)") }
        #expect(!held.isEmpty, "the server's descriptors are readable")
        // The server held them all before `posix_spawn` closed them in the child.
        #expect(opened.isDisjoint(with: held), "the server holds \(opened.intersection(held))")
    }

    /// What the symbolic link `path` points to (`socket:[1234]`, `pipe:[5678]`, a file), or `nil`.
    private static func target(of path: String) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: path)
    }
}
