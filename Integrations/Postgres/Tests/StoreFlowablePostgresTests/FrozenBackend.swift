import Foundation
import StoreFlowableTesting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A PostgreSQL backend stopped with `SIGSTOP`: its connection stays open and nothing on it is
/// answered, as with a server or a network that stopped answering without closing the connection.
/// ``thaw()`` lets it go on.
struct FrozenBackend {
    /// Why a backend could not be stopped.
    struct Failure: Error, CustomStringConvertible {
        /// The errno of `kill`.
        var description: String
    }

    /// The backend's process id.
    let pid: Int64

    /// Stops the backend `pid` (the tests run as the servers' user, or as root).
    ///
    /// - Parameter pid: The backend's process id.
    /// - Throws: ``Failure`` when `kill` fails.
    init(_ pid: Int64) throws {
        self.pid = pid
        guard kill(pid_t(pid), SIGSTOP) == 0 else { throw Failure(description: "SIGSTOP \(pid): errno \(errno)") }
    }

    /// Lets the backend go on.
    func thaw() {
        kill(pid_t(pid), SIGCONT)
    }

    /// Waits until bytes sent to the backend on the connection from `clientPort` to `serverPort` on
    /// 127.0.0.1 wait unread in its socket (Linux: `/proc/net/tcp`), for 20 seconds at most: the
    /// client has sent something the backend does not answer.
    ///
    /// The kernel tells nobody when bytes arrive in a stopped process's socket, so the table is read
    /// every 10 ms (reading it walks every TCP socket of the machine under the kernel's locks).
    ///
    /// - Parameters:
    ///   - serverPort: The server's port.
    ///   - clientPort: The connection's port on the client side.
    /// - Throws: When nothing waits unread after 20 seconds.
    func waitUntilSomethingIsUnread(serverPort: Int, clientPort: Int) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        let local = String(format: "0100007F:%04X", serverPort)
        let remote = String(format: "0100007F:%04X", clientPort)
        while clock.now < deadline {
            // Read to the end: `String(contentsOfFile:)` reads one page of a /proc file (it reports a size
            // of 0), which misses sockets when there are many.
            let bytes = FileHandle(forReadingAtPath: "/proc/net/tcp")?.readDataToEndOfFile() ?? Data()
            let table = String(decoding: bytes, as: UTF8.self)
            for line in table.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count > 4, fields[1] == local, fields[2] == remote else { continue }
                let unread = fields[4].split(separator: ":").last.flatMap { Int($0, radix: 16) } ?? 0
                if unread > 0 { return }
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw Failure(description: "nothing unread for backend \(pid) after 20 s")
    }

    /// Whether `/proc/net/tcp` exists, for ``waitUntilSomethingIsUnread(serverPort:clientPort:)``.
    static var canSeeSockets: Bool { FileManager.default.fileExists(atPath: "/proc/net/tcp") }
}

extension ManualClock {
    /// Waits until something sleeps on the clock, for 30 seconds at most (a bound for a failing test).
    ///
    /// - Parameter what: What is expected to sleep, for the failure.
    /// - Throws: When nothing sleeps after 30 seconds.
    func waitForSleeper(_ what: String) async throws {
        let found = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.sleepers(atLeast: 1)
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        guard found else { throw FrozenBackend.Failure(description: "nothing slept on the clock within 30 s: \(what)") }
    }
}
