import CatalogModel
import CatalogService
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A client that is gone without closing its connection (a cut cable, a host switched off: no FIN, no
/// RST) holds no `/events` stream, subscription or memory for longer than the connection timeout.
///
/// On loopback the peer's kernel acknowledges everything, so no test here can make a peer vanish
/// without privileges (a firewall rule, a network namespace). The nearest case is a client whose kernel
/// stops acknowledging new data: one that reads nothing, with a small receive buffer, until its window
/// is shut and the service's data waits unsent. Linux (since 5.11) applies `TCP_USER_TIMEOUT` to a
/// window shut for that long as it does to data left unacknowledged, which is what a vanished peer
/// leaves.
@Suite("Service: dead peers")
struct ServiceDeadPeerTests {
    /// Whether the running kernel drops a connection whose window stays shut past `TCP_USER_TIMEOUT`:
    /// Linux 5.11 and later.
    static var kernelTimesOutShutWindows: Bool {
        #if os(Linux)
            guard let release = try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8) else {
                return false
            }
            let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
            guard numbers.count == 2 else { return false }
            return (numbers[0], numbers[1]) >= (5, 11)
        #else
            return false
        #endif
    }

    @Test(
        .timeLimit(.minutes(1)),
        .enabled(if: kernelTimesOutShutWindows, "needs Linux 5.11 or later (TCP_USER_TIMEOUT on a shut window)"))
    func aStreamWhoseClientStopsAcknowledgingEndsAtTheConnectionTimeout() async throws {
        try await UpstreamTestServer.run { upstream in
            try await ServiceUnderTest.run(
                upstream: upstream.baseURL,
                configure: {
                    // Heartbeats often enough to fill the client's window within a second or so.
                    $0.eventHeartbeat = .milliseconds(5)
                    $0.deadPeerTimeout = .seconds(1)
                }
            ) { service in
                let connection = try RawConnection(port: service.endpoint.port, receiveBufferSize: 1024)
                defer { connection.close() }
                try connection.send("GET /products/3/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                try await waitUntil("the stream is open") {
                    try await service.metric("catalog_event_streams_open") == 1
                }
                // The client reads nothing from here on. Without the timeout the stream stays open for as
                // long as the client's kernel answers the window probes: for ever.
                try await waitUntil("the stream of the client that stopped reading has ended", timeout: .seconds(30)) {
                    try await service.metric("catalog_event_streams_open") == 0
                }
                try await waitUntil("its subscription is released") {
                    await service.catalog.trackedKeyCount() == 0
                }
            }
        }
    }

    #if os(Linux)
        @Test(.timeLimit(.minutes(1)))
        func everyAcceptedConnectionHasTheKeepaliveAndTheUserTimeout() async throws {
            try await UpstreamTestServer.run { upstream in
                try await ServiceUnderTest.run(
                    upstream: upstream.baseURL, configure: { $0.deadPeerTimeout = .seconds(12) }
                ) { service in
                    let connection = try RawConnection(port: service.endpoint.port)
                    defer { connection.close() }
                    // The service runs in this process: its end of the connection is one of its sockets.
                    let tcp = Int32(IPPROTO_TCP)
                    var accepted: Int32 = -1
                    // The user timeout is the last option set: once it is, every other one is.
                    try await waitUntil("the service's end of the connection has its user timeout") {
                        accepted = AcceptedSocket.find(port: service.endpoint.port, peerPort: connection.localPort)
                        return accepted >= 0 && AcceptedSocket.option(accepted, tcp, Int32(TCP_USER_TIMEOUT)) ?? 0 != 0
                    }
                    #expect(AcceptedSocket.option(accepted, SOL_SOCKET, SO_KEEPALIVE) == 1)
                    #expect(AcceptedSocket.option(accepted, tcp, Int32(TCP_USER_TIMEOUT)) == 12_000)
                    #expect(AcceptedSocket.option(accepted, tcp, TCP_KEEPIDLE) == 6)
                    #expect(AcceptedSocket.option(accepted, tcp, TCP_KEEPINTVL) == 2)
                    #expect(AcceptedSocket.option(accepted, tcp, TCP_KEEPCNT) == 3)
                }
            }
        }

        /// A timeout longer than the socket options hold (Linux refuses a keepalive idle time over
        /// 32,767 seconds; `TCP_USER_TIMEOUT` is milliseconds in a 32-bit int) is capped, and connections
        /// are still served: without the caps Linux refused the idle time, so neither it nor the user
        /// timeout was set and a vanished peer was kept for ever (and past the idle time, the timeout in
        /// milliseconds overflowed: NIO's option value is 64 bits wide on Linux, so it bounded nothing).
        @Test(.timeLimit(.minutes(1)), arguments: [Duration.seconds(100_000), .seconds(Int64.max)])
        func aTimeoutPastWhatTheSocketOptionsHoldIsCappedAndConnectionsAreServed(timeout: Duration) async throws {
            try await UpstreamTestServer.run { upstream in
                try await ServiceUnderTest.run(
                    upstream: upstream.baseURL, configure: { $0.deadPeerTimeout = timeout }
                ) { service in
                    let connection = try RawConnection(port: service.endpoint.port)
                    defer { connection.close() }
                    let tcp = Int32(IPPROTO_TCP)
                    var accepted: Int32 = -1
                    // The user timeout is the last option set.
                    try await waitUntil(
                        "the service's end of the connection has its user timeout", timeout: .seconds(5)
                    ) {
                        accepted = AcceptedSocket.find(port: service.endpoint.port, peerPort: connection.localPort)
                        return accepted >= 0 && AcceptedSocket.option(accepted, tcp, Int32(TCP_USER_TIMEOUT)) ?? 0 != 0
                    }
                    let seconds = min(timeout.components.seconds, Int64(Int32.max / 1000))
                    #expect(AcceptedSocket.option(accepted, tcp, Int32(TCP_USER_TIMEOUT)) == Int32(seconds * 1000))
                    #expect(AcceptedSocket.option(accepted, tcp, TCP_KEEPIDLE) == 32_767)
                    #expect(AcceptedSocket.option(accepted, tcp, TCP_KEEPINTVL) == Int32(min(seconds / 6, 32_767)))
                    #expect(try await service.get("/products/3").status == 200)
                }
            }
        }
    #endif
}

#if os(Linux)
    /// Finds a socket of this process by its addresses, and reads its options.
    enum AcceptedSocket {
        /// The descriptor of this process's TCP socket on 127.0.0.1 whose own port is `port` and whose
        /// peer's is `peerPort`, or -1.
        ///
        /// - Parameters:
        ///   - port: The socket's own port (the service's).
        ///   - peerPort: Its peer's port (the client's).
        /// - Returns: The descriptor, or -1 when there is none.
        static func find(port: Int, peerPort: Int) -> Int32 {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for descriptor in descriptors.compactMap({ Int32($0) }) {
                if self.port(descriptor, getsockname) == port, self.port(descriptor, getpeername) == peerPort {
                    return descriptor
                }
            }
            return -1
        }

        /// An integer option of `descriptor`, or `nil` when it cannot be read.
        ///
        /// - Parameters:
        ///   - descriptor: The socket.
        ///   - level: The option's level.
        ///   - name: The option's name.
        /// - Returns: Its value.
        static func option(_ descriptor: Int32, _ level: Int32, _ name: Int32) -> Int32? {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(descriptor, level, name, &value, &length) == 0 ? value : nil
        }

        /// The IPv4 port `call` (`getsockname` or `getpeername`) gives for `descriptor`, or `nil`.
        private static func port(
            _ descriptor: Int32,
            _ call: (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?) -> Int32
        ) -> Int? {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(descriptor, $0, &length) }
            }
            guard named == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
            return Int(UInt16(bigEndian: address.sin_port))
        }
    }
#endif
